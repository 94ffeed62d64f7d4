package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// ProjectDirName is the folder name Claude Code gives a project under <config dir>/projects:
// every UTF-16 code unit of the path outside [A-Za-z0-9] becomes "-" (Claude Code's
// sanitizePath; "/home/demo/src/lab" → "-home-demo-src-lab"). Names longer than 200 units get a
// runtime-dependent hash after the first 200; ProjectDirName returns the first 200 units then,
// and callers match folders by that prefix (ProjectDir).
func ProjectDirName(path string) string {
	var b strings.Builder
	n := 0
	for _, r := range path {
		units := 1
		if r > 0xFFFF {
			units = 2
		}
		for i := 0; i < units && n < 200; i++ {
			if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
			n++
		}
	}
	return b.String()
}

// ProjectDir returns the folder of project path under projectsRoot (<config dir>/projects),
// "" when there is none: the exact ProjectDirName, or for a long path the folder that starts
// with its 200-unit prefix followed by "-".
func ProjectDir(projectsRoot, path string) string {
	name := ProjectDirName(path)
	if fi, err := os.Stat(filepath.Join(projectsRoot, name)); err == nil && fi.IsDir() {
		return filepath.Join(projectsRoot, name)
	}
	if len(name) < 200 {
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(projectsRoot, name+"-*"))
	if len(m) == 1 {
		return m[0]
	}
	return ""
}

// SessionVersions returns the distinct "version" values of the session lines of every *.jsonl
// file under root (sorted as strings), with an error per file that cannot be read. Lines that
// are not JSON objects or carry no string version are skipped (the audit only needs the
// releases that wrote the sessions).
func SessionVersions(root string) ([]string, []error) {
	set := map[string]bool{}
	var errs []error
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != root || !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("read sessions %s: %w", p, err))
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(p, ".jsonl") || !d.Type().IsRegular() {
			return nil
		}
		if err := fileVersions(p, set); err != nil {
			errs = append(errs, fmt.Errorf("read session %s: %w", p, err))
		}
		return nil
	})
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, errs
}

var versionKey = []byte(`"version"`)

func fileVersions(path string, set map[string]bool) error {
	f, _, err := fileio.OpenStore(path, store.FileID{}) // a session: no FIFO waited on
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && bytes.Contains(line, versionKey) {
			var v struct {
				Version json.RawMessage `json:"version"`
			}
			if json.Unmarshal(line, &v) == nil && len(v.Version) > 0 {
				var s string
				if json.Unmarshal(v.Version, &s) == nil && s != "" {
					set[s] = true
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
