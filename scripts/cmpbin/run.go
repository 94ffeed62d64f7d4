package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// stepTimeout bounds one command; a command that takes longer is killed and its result is
// "timeout" (exit -1).
const stepTimeout = 2 * time.Minute

// entry is one file, directory or link under a root after a step, normalized.
type entry struct {
	kind  byte // 'f' file, 'd' directory, 'l' symbolic link, '?' other
	mode  fs.FileMode
	size  int
	sum   [32]byte // of the normalized content, or of the link's normalized target
	mtime string   // a file's mtime if it is one the template gave (kept), else "" (set by the run)
	rel   string   // the path as it is (the key is normalized)
}

// tree is a root's entries by normalized path; two entries whose paths normalize alike (the
// backups of two stores of the same name) are both kept, in the order of their sums.
type tree map[string][]entry

// stepResult is what one step gave: exit status, normalized outputs and the tree after it.
type stepResult struct {
	code           int
	stdout, stderr string
	tree           tree
}

// caseRun is one run of a case with one binary.
type caseRun struct {
	steps []stepResult
	err   error // the harness failed (not the command)
}

// slot is one job's directory: root is where a case runs (always the same path, so both runs
// of a case see the same paths), kept holds the first run's root while the second runs.
type slot struct {
	dir, root, kept, tmp string
}

func (w *workspace) newSlot(i int) (*slot, error) {
	d := filepath.Join(w.tmp, "slots", fmt.Sprint(i))
	s := &slot{dir: d, root: filepath.Join(d, "root"), kept: filepath.Join(d, "kept"), tmp: filepath.Join(d, "tmp")}
	return s, os.MkdirAll(s.tmp, 0o755)
}

// runCase runs c with the binary bin (old: steps always with w.oldBin) in a fresh copy of the
// template at s.root.
func (w *workspace) runCase(ctx context.Context, s *slot, c Case, bin string) caseRun {
	if err := os.RemoveAll(s.root); err != nil {
		return caseRun{err: err}
	}
	norm := w.normalizer(s.root)
	stamps, err := w.instantiate(s.root, norm)
	if err != nil {
		return caseRun{err: fmt.Errorf("instantiate: %w", err)}
	}
	cwd := s.root
	var res caseRun
	for _, st := range c.Steps {
		var r stepResult
		switch st.Builtin {
		case "@cd":
			cwd = filepath.Join(cwd, st.Args[0])
		case "@append":
			f, err := os.OpenFile(filepath.Join(cwd, st.Args[0]), os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, err = f.WriteString(st.Args[1] + "\n")
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				r.code, r.stderr = 1, norm.text(err.Error())
			}
		default:
			b := bin
			if st.Old {
				b = w.oldBin
			}
			r = w.runStep(ctx, s, cwd, b, st, norm)
		}
		tree, err := snapshot(s.root, norm, w.start, stamps)
		if err != nil {
			return caseRun{err: err}
		}
		r.tree = tree
		res.steps = append(res.steps, r)
	}
	return res
}

// stepEnv is the whole environment of a command: nothing of the caller's.
func stepEnv(root, tmp string, extra []string) []string {
	env := []string{
		"HOME=" + filepath.Join(root, "home"),
		"XDG_STATE_HOME=" + filepath.Join(root, "state"),
		"TMPDIR=" + tmp,
		"TZ=UTC",
		"LANG=C",
		"LC_ALL=C",
		"PATH=/usr/local/bin:/usr/bin:/bin",
	}
	return append(env, extra...)
}

// expandVars replaces $ROOT and $STUB in a word.
func (w *workspace) expandVars(s, root string) string {
	return strings.NewReplacer("$ROOT", root, "$STUB", w.stub).Replace(s)
}

func (w *workspace) runStep(ctx context.Context, s *slot, cwd, bin string, st Step, norm *normalizer) stepResult {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	args := make([]string, len(st.Args))
	for i, a := range st.Args {
		args[i] = w.expandVars(a, s.root)
	}
	var extra []string
	for _, e := range st.Env {
		extra = append(extra, w.expandVars(e, s.root))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Args[0] = "sessionfix"
	cmd.Dir = cwd
	cmd.Env = stepEnv(s.root, s.tmp, extra)
	cmd.WaitDelay = 5 * time.Second
	if st.Stdin != "" {
		f, err := os.Open(filepath.Join(cwd, w.expandVars(st.Stdin, s.root)))
		if err != nil {
			return stepResult{code: -1, stderr: "cmpbin: " + norm.text(err.Error())}
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if st.Stdout != "" {
		f, err := os.Create(filepath.Join(cwd, w.expandVars(st.Stdout, s.root)))
		if err != nil {
			return stepResult{code: -1, stderr: "cmpbin: " + norm.text(err.Error())}
		}
		defer f.Close()
		cmd.Stdout = f
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		code = -1
		errb.WriteString("\ncmpbin: timeout")
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
		errb.WriteString("\ncmpbin: " + err.Error())
	}
	return stepResult{code: code, stdout: norm.text(out.String()), stderr: norm.text(errb.String())}
}

// snapshot records every entry under root, normalized (paths and contents). A file whose
// identity is still its stamp's is not read again.
func snapshot(root string, norm *normalizer, start time.Time, stamps map[string]stamp) (tree, error) {
	out := tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{mode: fi.Mode().Perm(), rel: rel}
		switch {
		case d.IsDir():
			e.kind = 'd'
		case d.Type()&fs.ModeSymlink != 0:
			e.kind = 'l'
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e.sum = sha256.Sum256([]byte(norm.text(t)))
		case d.Type().IsRegular():
			e.kind = 'f'
			e.size = int(fi.Size())
			id, ok := identityOf(fi)
			if st, known := stamps[rel]; ok && known && st.id == id {
				e.sum = st.sum
			} else {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				e.sum = sha256.Sum256(norm.file(filepath.Base(p), b))
			}
			if fi.ModTime().Before(start.Add(-time.Hour)) {
				e.mtime = fi.ModTime().UTC().Format(time.RFC3339Nano)
			}
		default:
			e.kind = '?'
		}
		key := norm.path(rel)
		out[key] = append(out[key], e)
		return nil
	})
	for _, es := range out {
		sort.Slice(es, func(i, j int) bool { return bytes.Compare(es[i].sum[:], es[j].sum[:]) < 0 })
	}
	return out, err
}

// summary counts the cases and what differed.
type summary struct {
	mu                   sync.Mutex
	cases, steps         int
	identical, different int
	byClass              map[string]int // exit, stdout, stderr, files: cases with such a difference
	codes                map[int]int    // exit status of the new binary's commands
	diffs                []string       // the report of each differing case, in case order
}

// runAll runs every case with both binaries, jobs at a time, and compares.
func (w *workspace) runAll(ctx context.Context, cases []Case, o options) (*summary, error) {
	sum := &summary{byClass: map[string]int{}, codes: map[int]int{}}
	reports := make([]string, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for j := 0; j < o.jobs; j++ {
		s, err := w.newSlot(j)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rep, err := w.compareCase(ctx, s, cases[i], sum, o)
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("case %s: %w", cases[i].Name, err) })
				}
				reports[i] = rep
			}
		}()
	}
	done := 0
	for i := range cases {
		if ctx.Err() != nil {
			break
		}
		next <- i
		done++
		if !o.verbose && done%50 == 0 {
			fmt.Fprintf(os.Stderr, "cmpbin: %d of %d cases started\n", done, len(cases))
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if firstErr != nil {
		return nil, firstErr
	}
	for _, r := range reports {
		if r != "" {
			sum.diffs = append(sum.diffs, r)
		}
	}
	return sum, nil
}

// compareCase runs c with the old and the new binary in slot s and compares; it returns the
// report of a difference ("" when identical).
func (w *workspace) compareCase(ctx context.Context, s *slot, c Case, sum *summary, o options) (string, error) {
	a := w.runCase(ctx, s, c, w.oldBin)
	if a.err != nil {
		return "", a.err
	}
	_ = os.RemoveAll(s.kept)
	if err := os.Rename(s.root, s.kept); err != nil {
		return "", err
	}
	b := w.runCase(ctx, s, c, w.newBin)
	if b.err != nil {
		return "", b.err
	}
	diffs, classes := compareRuns(c, a, b, s.kept, s.root, w.normalizer(s.root))
	sum.mu.Lock()
	defer sum.mu.Unlock()
	sum.cases++
	for i, r := range b.steps {
		if c.Steps[i].Builtin == "" {
			sum.steps++
			sum.codes[r.code]++
		}
	}
	if len(diffs) == 0 {
		sum.identical++
		if o.verbose {
			fmt.Fprintf(os.Stderr, "same %s\n", c.Name)
		}
		if o.keep != "" && o.keepAll {
			return "", keepCase(o.keep, c, s, a, b, false)
		}
		return "", nil
	}
	sum.different++
	for _, cl := range classes {
		sum.byClass[cl]++
	}
	rep := "DIFF " + c.Name + ": " + c.Text + "\n" + strings.Join(diffs, "\n") + "\n"
	if o.verbose {
		fmt.Fprint(os.Stderr, rep)
	}
	if o.keep != "" {
		if err := keepCase(o.keep, c, s, a, b, true); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// keepCase writes the outputs of each step (and with roots, a copy of the root after the last
// step) into dir/NAME/{old,new}.
func keepCase(dir string, c Case, s *slot, a, b caseRun, roots bool) error {
	base := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(c.Name))
	for _, r := range []struct {
		name, root string
		run        caseRun
	}{{"old", s.kept, a}, {"new", s.root, b}} {
		d := filepath.Join(base, r.name)
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if roots {
			if err := copyTree(r.root, filepath.Join(d, "root")); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(d, "case"), []byte(c.Name+" "+c.Text+"\n"), 0o644); err != nil {
			return err
		}
		for i, st := range r.run.steps {
			for _, f := range []struct{ ext, s string }{{"stdout", st.stdout}, {"stderr", st.stderr}, {"code", fmt.Sprintln(st.code)}} {
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("step%d.%s", i+1, f.ext)), []byte(f.s), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// sortedKeys returns the keys of both trees, sorted.
func sortedKeys(a, b tree) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
