package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// normalizer replaces what differs from one run of the same binary to the next, and nothing
// else (main.go's list).
type normalizer struct {
	paths []string // root, temp directory and their real paths, longest first
	names []string // what each of paths becomes
	start time.Time
}

func (w *workspace) normalizer(root string) *normalizer {
	n := &normalizer{start: w.start}
	add := func(p, name string) {
		n.paths, n.names = append(n.paths, p), append(n.names, name)
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			n.paths, n.names = append(n.paths, real), append(n.names, name)
		}
	}
	add(root, "$ROOT")
	add(w.tmp, "$TMP")
	return n
}

var (
	reRunID = regexp.MustCompile(`\b\d{8}T\d{6}Z-[0-9a-f]{4}\b`)
	// reTime finds a time of day with a date, as the commands print them (RFC 3339, "2006-01-02
	// 15:04:05Z", with or without seconds, fraction and zone).
	reTime    = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2}| UTC)?`)
	reElapsed = regexp.MustCompile(`(\bin |"elapsed": ?")(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|us|ms|s)\b`)
	reTemp    = regexp.MustCompile(`"path":"([^"]*)"`)
	// reBackup finds the number of a backup file: runs number their backups in the order
	// concurrent workers reach them.
	reBackup = regexp.MustCompile(`(/backups/)\d{4}-`)
	// reBase64JSON finds a JSON object encoded as a base64 JSON string (a []byte member such as
	// a SQLite change's "verify"): its paths and run id are normalized inside.
	reBase64JSON = regexp.MustCompile(`"(eyJ[A-Za-z0-9+/]*=*)"`)
	reStore      = regexp.MustCompile(`"store":"([^"]*)"`)
)

// text normalizes an output or a text file's content.
func (n *normalizer) text(s string) string {
	s = reBase64JSON.ReplaceAllStringFunc(s, func(m string) string {
		b, err := base64.StdEncoding.DecodeString(m[1 : len(m)-1])
		if err != nil || !utf8.Valid(b) {
			return m
		}
		return `"base64:` + string(b) + `"`
	})
	for i, p := range n.paths {
		s = strings.ReplaceAll(s, p, n.names[i])
	}
	s = reRunID.ReplaceAllString(s, "RUNID")
	s = reTime.ReplaceAllStringFunc(s, func(m string) string {
		if n.recent(m) {
			return "TIME"
		}
		return m
	})
	s = reElapsed.ReplaceAllString(s, "${1}DUR")
	s = reBackup.ReplaceAllString(s, "${1}NNNN-")
	if strings.HasPrefix(s, string(manifestSeal)) && len(s) >= len(manifestSeal)+64 {
		s = s[:len(manifestSeal)] + "SEAL" + s[len(manifestSeal)+64:]
	}
	return s
}

// recent says whether the time m (a reTime match) is within the run: from an hour before the
// harness started to an hour from now. Times in fixtures are older and compared as they are.
func (n *normalizer) recent(m string) bool {
	g := reTime.FindStringSubmatch(m)
	sec := g[3]
	if sec == "" {
		sec = ":00"
	}
	zone := g[4]
	switch zone {
	case "", " UTC":
		zone = "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, g[1]+"T"+g[2]+sec+zone)
	if err != nil {
		return false
	}
	return t.After(n.start.Add(-time.Hour)) && t.Before(time.Now().Add(time.Hour))
}

// path normalizes a path relative to the root.
func (n *normalizer) path(rel string) string {
	return reBackup.ReplaceAllString("/"+reRunID.ReplaceAllString(rel, "RUNID"), "${1}NNNN-")[1:]
}

// file normalizes a file's content: binary content (a NUL byte, or not UTF-8) is compared as
// it is; a journal's lines lose their seals and the random digits of temp names and are sorted
// (concurrent writers append them in any order).
func (n *normalizer) file(base string, b []byte) []byte {
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return b
	}
	s := n.text(string(b))
	if base != "journal.jsonl" {
		return []byte(s)
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, string(journalSeal)) && len(l) >= len(journalSeal)+64 {
			l = l[:len(journalSeal)] + "SEAL" + l[len(journalSeal)+64:]
		}
		lines[i] = untemp(l)
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, ""))
}

// untemp replaces the random digits of a temp file's name in a journal line: the "path" of a
// temp event is the store's directory, ".", the store's name and up to 12 digits.
func untemp(l string) string {
	st := reStore.FindStringSubmatch(l)
	if st == nil {
		return l
	}
	prefix := filepath.Join(filepath.Dir(st[1]), "."+filepath.Base(st[1]))
	return reTemp.ReplaceAllStringFunc(l, func(m string) string {
		p := reTemp.FindStringSubmatch(m)[1]
		digits, ok := strings.CutPrefix(p, prefix)
		if !ok || digits == "" || len(digits) > 12 || strings.Trim(digits, "0123456789") != "" {
			return m
		}
		return `"path":"` + prefix + `TEMP"`
	})
}

// maxDiffLines bounds the lines reported for one case.
const maxDiffLines = 12

// compareRuns compares the two runs of c step by step; it returns the differences found (at
// most maxDiffLines) and their classes (exit, stdout, stderr, files). rootA and rootB hold
// the trees after the last step, to show where a file's content differs.
func compareRuns(c Case, a, b caseRun, rootA, rootB string, norm *normalizer) (diffs, classes []string) {
	add := func(class, s string) {
		if !slices.Contains(classes, class) {
			classes = append(classes, class)
		}
		if len(diffs) < maxDiffLines {
			diffs = append(diffs, "  "+s)
		}
	}
	for i := range c.Steps {
		ra, rb := a.steps[i], b.steps[i]
		at := fmt.Sprintf("step %d (%s)", i+1, c.Steps[i])
		if ra.code != rb.code {
			add("exit", fmt.Sprintf("%s: exit %d, new %d", at, ra.code, rb.code))
		}
		if ra.stdout != rb.stdout {
			add("stdout", at+": stdout "+firstDiff(ra.stdout, rb.stdout))
		}
		if ra.stderr != rb.stderr {
			add("stderr", at+": stderr "+firstDiff(ra.stderr, rb.stderr))
		}
		last := i == len(c.Steps)-1
		for _, k := range sortedKeys(ra.tree, rb.tree) {
			la, lb := ra.tree[k], rb.tree[k]
			switch {
			case len(lb) == 0:
				add("files", fmt.Sprintf("%s: %s only in the old run's root", at, k))
				continue
			case len(la) == 0:
				add("files", fmt.Sprintf("%s: %s only in the new run's root", at, k))
				continue
			case len(la) != len(lb):
				add("files", fmt.Sprintf("%s: %d entries %s, new %d", at, len(la), k, len(lb)))
				continue
			}
			for j := range la {
				if d := entryDiff(la[j], lb[j], last, rootA, rootB, norm); d != "" {
					add("files", fmt.Sprintf("%s: %s %s", at, k, d))
				}
			}
		}
	}
	return diffs, classes
}

// entryDiff says how two entries of the same path differ ("" when they do not); with
// content (the last step: the files are still there) it shows where a file's content differs.
func entryDiff(ea, eb entry, content bool, rootA, rootB string, norm *normalizer) string {
	switch {
	case ea.kind != eb.kind:
		return fmt.Sprintf("is %c, new %c", ea.kind, eb.kind)
	case ea.mode != eb.mode:
		return fmt.Sprintf("mode %v, new %v", ea.mode, eb.mode)
	case ea.sum != eb.sum:
		d := fmt.Sprintf("size %d, new %d", ea.size, eb.size)
		if content && ea.kind == 'f' {
			d = fileDiff(filepath.Join(rootA, ea.rel), filepath.Join(rootB, eb.rel), norm)
		}
		return "content differs: " + d
	case ea.mtime != eb.mtime:
		return fmt.Sprintf("mtime %q, new %q (\"\": set by the run)", ea.mtime, eb.mtime)
	}
	return ""
}

// firstDiff says where two texts first differ: line number, old and new line.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y || i >= len(la) || i >= len(lb) {
			return fmt.Sprintf("line %d: old %q, new %q", i+1, clip(x), clip(y))
		}
	}
	return "(same lines)"
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// fileDiff is firstDiff of two files' normalized contents.
func fileDiff(a, b string, norm *normalizer) string {
	read := func(p string) string {
		f, err := os.Open(p)
		if err != nil {
			return "(" + err.Error() + ")"
		}
		defer f.Close()
		data, _ := io.ReadAll(f)
		return string(norm.file(filepath.Base(p), data))
	}
	return firstDiff(read(a), read(b))
}

// print writes the comparison's report: every differing case, then the counts.
func (s *summary) print(w io.Writer, ws *workspace, took time.Duration) {
	for _, d := range s.diffs {
		fmt.Fprint(w, d)
	}
	pct := 0.0
	if s.cases > 0 {
		pct = 100 * float64(s.identical) / float64(s.cases)
	}
	fmt.Fprintf(w, "cmpbin: old %s, new %s\n", ws.oldRev, ws.newRev)
	fmt.Fprintf(w, "cmpbin: %d cases, %d commands: %d identical (%.1f %%), %d different", s.cases, s.steps, s.identical, pct, s.different)
	if s.different > 0 {
		var cl []string
		for _, k := range []string{"exit", "stdout", "stderr", "files"} {
			if s.byClass[k] > 0 {
				cl = append(cl, fmt.Sprintf("%s %d", k, s.byClass[k]))
			}
		}
		fmt.Fprintf(w, " (%s)", strings.Join(cl, ", "))
	}
	fmt.Fprintf(w, "; %s\n", took.Round(time.Second))
	var codes []int
	for c := range s.codes {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var cs []string
	for _, c := range codes {
		cs = append(cs, fmt.Sprintf("%d: %d", c, s.codes[c]))
	}
	fmt.Fprintf(w, "cmpbin: exit status of the new binary's commands: %s\n", strings.Join(cs, ", "))
}
