package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// workspace is one comparison's temp directory: the two binaries, the template root every
// case starts from, and one slot (a root directory) per job.
type workspace struct {
	tmp, repo      string
	start          time.Time
	oldBin, newBin string
	oldRev, newRev string
	stub           string     // the MCP stub server (a copy of this program)
	template       string     // the root every case starts from
	relocations    []relocate // old run directories moved into each case's root

	sumsMu sync.Mutex
	sums   map[string][32]byte // normalized sums of the template's files (templateSum)
}

// relocate is a run directory recorded elsewhere: its files name was (the absolute directory
// the recording ran in); in a case's root they name $ROOT/dir instead, sealed again.
type relocate struct {
	dir, was string
}

// baseMtime is the mtime of the template's first file (the others follow a second apart, in
// path order): far in the past, so that a kept mtime is told from one the run set.
var baseMtime = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// prepare copies the stub server and builds the template root from the layout file.
func (w *workspace) prepare(ctx context.Context, layoutFile string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	w.stub = filepath.Join(w.tmp, "bin", "mcp-stub")
	if err := os.MkdirAll(filepath.Dir(w.stub), 0o755); err != nil {
		return err
	}
	if err := copyFile(self, w.stub, 0o755); err != nil {
		return err
	}
	layout, err := os.ReadFile(layoutFile)
	if err != nil {
		return err
	}
	w.template = filepath.Join(w.tmp, "template")
	if err := os.MkdirAll(w.template, 0o755); err != nil {
		return err
	}
	sqlitetool := ""
	build := func(dst string, sqls []string) error {
		if sqlitetool == "" {
			if sqlitetool, err = buildSQLiteTool(ctx, w.repo, filepath.Join(w.tmp, "bin")); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		_, err := command(ctx, w.repo, nil, sqlitetool, append([]string{"build", dst}, sqls...)...)
		return err
	}
	if w.relocations, err = applyLayout(layout, w.repo, w.template, map[string]string{"$STUB": w.stub}, build); err != nil {
		return fmt.Errorf("%s: %w", layoutFile, err)
	}
	return fixModesAndTimes(w.template)
}

// applyLayout makes the template root dst from the layout's directives (layout.txt's header):
//
//	copy DST SRC           the file or tree SRC (relative to the repository)
//	text DST SRC           the file SRC with every key of vars replaced by its value
//	sqlite DST SRC...      a SQLite database (WAL) built from the SQL files SRC...
//	run DST SRC WAS        the run tree SRC recorded in the directory WAS, moved to $ROOT/DST
//	fixtures DIR           every directory of fixtures/ copied to DIR/NAME, each *.sql in it
//	                       also built into NAME.db beside it
//	mkdir DST              an empty directory
//
// build makes a SQLite database from SQL files. It returns the runs to relocate per case.
func applyLayout(layout []byte, repo, dst string, vars map[string]string, build func(dst string, sqls []string) error) ([]relocate, error) {
	var rel []relocate
	sc := bufio.NewScanner(bytes.NewReader(layout))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		bad := func(want string) error { return fmt.Errorf("line %d: want %q", n, want) }
		at := func(p string) string { return filepath.Join(dst, filepath.FromSlash(p)) }
		src := func(p string) string { return filepath.Join(repo, filepath.FromSlash(p)) }
		var err error
		switch f[0] {
		case "copy":
			if len(f) != 3 {
				return nil, bad("copy DST SRC")
			}
			err = copyTree(src(f[2]), at(f[1]))
		case "text":
			if len(f) != 3 {
				return nil, bad("text DST SRC")
			}
			var b []byte
			if b, err = os.ReadFile(src(f[2])); err == nil {
				s := string(b)
				for k, v := range vars {
					s = strings.ReplaceAll(s, k, v)
				}
				if err = os.MkdirAll(filepath.Dir(at(f[1])), 0o755); err == nil {
					err = os.WriteFile(at(f[1]), []byte(s), 0o644)
				}
			}
		case "sqlite":
			if len(f) < 3 {
				return nil, bad("sqlite DST SRC...")
			}
			var sqls []string
			for _, s := range f[2:] {
				sqls = append(sqls, src(s))
			}
			err = build(at(f[1]), sqls)
		case "run":
			if len(f) != 4 || !filepath.IsAbs(f[3]) {
				return nil, bad("run DST SRC /ABSOLUTE/DIR")
			}
			err = copyTree(src(f[2]), at(f[1]))
			rel = append(rel, relocate{dir: filepath.FromSlash(f[1]), was: filepath.Clean(f[3])})
		case "fixtures":
			if len(f) != 2 {
				return nil, bad("fixtures DIR")
			}
			err = copyFixtures(repo, at(f[1]), build)
		case "mkdir":
			if len(f) != 2 {
				return nil, bad("mkdir DST")
			}
			err = os.MkdirAll(at(f[1]), 0o755)
		default:
			return nil, fmt.Errorf("line %d: unknown directive %q", n, f[0])
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	return rel, sc.Err()
}

// copyFixtures copies every directory of repo/fixtures to dst/NAME, and builds NAME/X.db from
// each NAME/**/X.sql.
func copyFixtures(repo, dst string, build func(string, []string) error) error {
	dirs, err := fixtureDirs(repo)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		to := filepath.Join(dst, d)
		if err := copyTree(filepath.Join(repo, "fixtures", d), to); err != nil {
			return err
		}
		var sqls []string
		if err := filepath.WalkDir(to, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".sql") {
				sqls = append(sqls, p)
			}
			return err
		}); err != nil {
			return err
		}
		for _, s := range sqls {
			if err := build(strings.TrimSuffix(s, ".sql")+".db", []string{s}); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildSQLiteTool builds the repository's sqlitetool (the demo's SQLite helper: build a
// database from SQL text) into dir. It is found by name, wherever the tree keeps it.
func buildSQLiteTool(ctx context.Context, repo, dir string) (string, error) {
	var pkg string
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != repo && (strings.HasPrefix(d.Name(), ".") || d.Name() == "fixtures" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "sqlitetool" && pkg == "" {
			pkg = p
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if pkg == "" {
		return "", fmt.Errorf("no sqlitetool directory in %s", repo)
	}
	rel, _ := filepath.Rel(repo, pkg)
	bin := filepath.Join(dir, "sqlitetool")
	_, err = command(ctx, repo, nil, "go", "build", "-o", bin, "./"+filepath.ToSlash(rel))
	return bin, err
}

// fixModesAndTimes gives the template's files mode 0644 (0755 when executable by the owner)
// and directories 0755, and every file a fixed mtime: baseMtime plus one second per file in
// path order.
func fixModesAndTimes(root string) error {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Chmod(p, 0o755)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			mode := fs.FileMode(0o644)
			if fi.Mode()&0o100 != 0 {
				mode = 0o755
			}
			files = append(files, p)
			return os.Chmod(p, mode)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for i, p := range files {
		t := baseMtime.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, t, t); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies the file or tree src to dst (regular files and directories; links as links).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		default:
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			return copyFile(p, to, fi.Mode().Perm())
		}
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// stamp is a file of a fresh root as instantiate wrote it: its identity and normalized sum,
// so that a snapshot need not read it again while it is unchanged.
type stamp struct {
	id  identity
	sum [32]byte
}

// instantiate copies the template to root, keeping modes and mtimes, and moves the old runs
// into it (relocateRun). It returns the stamp of every file it wrote, by path relative to root.
func (w *workspace) instantiate(root string, norm *normalizer) (map[string]stamp, error) {
	stamps := map[string]stamp{}
	err := filepath.WalkDir(w.template, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.template, p)
		to := filepath.Join(root, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, fi.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		}
		var b []byte
		for _, r := range w.relocations {
			if under(rel, r.dir) {
				if b, err = os.ReadFile(p); err != nil {
					return err
				}
				b = relocateRun(b, r.was, filepath.Join(root, r.dir))
			}
		}
		var sum [32]byte
		if b != nil {
			err = os.WriteFile(to, b, fi.Mode().Perm())
			sum = sha256.Sum256(norm.file(filepath.Base(p), b))
		} else {
			err = copyFile(p, to, fi.Mode().Perm())
			if err == nil {
				sum, err = w.templateSum(rel, p)
			}
		}
		if err != nil {
			return err
		}
		if err := os.Chtimes(to, fi.ModTime(), fi.ModTime()); err != nil {
			return err
		}
		if nfi, err := os.Lstat(to); err == nil {
			if id, ok := identityOf(nfi); ok {
				stamps[filepath.ToSlash(rel)] = stamp{id: id, sum: sum}
			}
		}
		return nil
	})
	return stamps, err
}

// templateSum is the normalized sum of the template's file p (rel in the template), computed
// once. A template file holds no case root (only relocated runs do, and they are not asked).
func (w *workspace) templateSum(rel, p string) ([32]byte, error) {
	w.sumsMu.Lock()
	defer w.sumsMu.Unlock()
	if s, ok := w.sums[rel]; ok {
		return s, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return [32]byte{}, err
	}
	if w.sums == nil {
		w.sums = map[string][32]byte{}
	}
	s := sha256.Sum256(w.normalizer(filepath.Join(w.tmp, "no-root")).file(filepath.Base(p), b))
	w.sums[rel] = s
	return s, nil
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// The seals of a run directory (docs/plan.md, runlog's trust.go): a manifest (or plan file)
// starts with manifestSeal and a journal line with journalSeal, each followed by the 64 hex
// digits of the SHA-256 of the bytes with those digits as zeros.
var (
	manifestSeal = []byte("{\n  \"checksum\": \"sha256:")
	journalSeal  = []byte("{\"sum\":\"sha256:")
	zeroDigits   = bytes.Repeat([]byte("0"), 64)
)

// relocateRun replaces the directory was by now in a file of a recorded run and seals it again
// where it was sealed (the whole file for a manifest, each line for a journal).
func relocateRun(b []byte, was, now string) []byte {
	b = bytes.ReplaceAll(b, []byte(was+"/"), []byte(now+"/"))
	if bytes.HasPrefix(b, manifestSeal) {
		return reseal(b, manifestSeal)
	}
	if !bytes.HasPrefix(b, journalSeal) {
		return b
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		if bytes.HasPrefix(l, journalSeal) {
			body := bytes.TrimSuffix(l, []byte("\n"))
			lines[i] = append(reseal(body, journalSeal), l[len(body):]...)
		}
	}
	return bytes.Join(lines, nil)
}

// reseal returns b with the 64 digits after prefix replaced by the SHA-256 of b with zeros there.
func reseal(b, prefix []byte) []byte {
	if len(b) < len(prefix)+64 {
		return b
	}
	c := bytes.Clone(b)
	copy(c[len(prefix):], zeroDigits)
	sum := sha256.Sum256(c)
	hex.Encode(c[len(prefix):len(prefix)+64], sum[:])
	return c
}
