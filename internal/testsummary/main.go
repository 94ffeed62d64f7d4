// Command testsummary reads `go test -json` events on stdin and prints what a plain `go test`
// prints (one "ok", "FAIL" or "?" line per package, build errors, the whole output of every
// failing test), then one closing line listing every skipped test with its reason (helper processes,
// TestHelper…, named apart and not counted), so skips
// are never silent. make test pipes into it; it exits 1 when a test or package failed or the
// input holds a line that is not a test2json event (printed as it is), else 0.
//
// Event shape: cmd/test2json (Action, Package, Test, Output); a skip reason is the text the
// test logged before its "--- SKIP" line, without the "file.go:NN: " prefix.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Skip is one skipped test: its package, name and reason.
type Skip struct {
	Package, Test, Reason string
}

// Summarize copies the plain-go-test part of the events in r to w and returns the skipped
// tests and whether anything failed.
func Summarize(r io.Reader, w io.Writer) (skips []Skip, failed bool, err error) {
	type key struct{ pkg, test string }
	out := map[key][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line) // not an event (go vet, a crash of go test itself)
			failed = true
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Test == "" && e.Action == "output":
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				fmt.Fprint(w, e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			failed = true
		case e.Test == "":
			// start, pass, skip (no test files) of a package: its output line says it
		case e.Action == "output":
			out[k] = append(out[k], e.Output)
		case e.Action == "fail":
			failed = true
			for _, o := range out[k] {
				fmt.Fprint(w, o)
			}
			delete(out, k)
		case e.Action == "skip":
			skips = append(skips, Skip{e.Package, e.Test, reason(out[k])})
			delete(out, k)
		case e.Action == "pass":
			delete(out, k)
		}
	}
	return skips, failed, sc.Err()
}

// reason is the text a skipped test logged: its lines without "=== RUN", "--- SKIP" and the
// "file.go:NN: " location, joined by spaces.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if i := strings.Index(l, ": "); i > 0 && strings.Contains(l[:i], ".go:") {
			l = l[i+2:]
		}
		l = strings.TrimPrefix(l, "skipped: ")
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, " ")
}

// Line is the one closing line: "skipped: none" or "skipped N tests: REASON (T1, T2); …",
// tests grouped by reason, reasons in order of first appearance. Helper processes (a test
// named TestHelper…, which a test re-executes the binary to run and which skips when not
// invoked so: isHelper) are not counted as skipped tests; they are named apart at the end,
// "(not counted: N helper processes, not tests: P.TestHelperX, …)".
func Line(skips []Skip) string {
	var tests, helpers []string
	var order []string
	by := map[string][]string{}
	for _, s := range skips {
		name := s.Package[strings.LastIndex(s.Package, "/")+1:] + "." + s.Test
		if isHelper(s.Test) {
			helpers = append(helpers, name)
			continue
		}
		tests = append(tests, name)
		if _, ok := by[s.Reason]; !ok {
			order = append(order, s.Reason)
		}
		by[s.Reason] = append(by[s.Reason], name)
	}
	line := "skipped: none"
	if len(tests) > 0 {
		groups := make([]string, len(order))
		for i, r := range order {
			sort.Strings(by[r])
			groups[i] = strings.TrimSuffix(r, ".") + " (" + strings.Join(by[r], ", ") + ")"
		}
		noun := "tests"
		if len(tests) == 1 {
			noun = "test"
		}
		line = fmt.Sprintf("skipped %d %s: %s", len(tests), noun, strings.Join(groups, "; "))
	}
	if len(helpers) > 0 {
		sort.Strings(helpers)
		noun := "helper processes"
		if len(helpers) == 1 {
			noun = "helper process"
		}
		line += fmt.Sprintf(" (not counted: %d %s, not tests: %s)", len(helpers), noun, strings.Join(helpers, ", "))
	}
	return line
}

// isHelper reports whether test (a name as go test prints it, subtests after "/") is a helper
// process: a top-level test named TestHelper followed by an upper-case letter or nothing, the
// project's convention for a test a test re-executes the binary to run.
func isHelper(test string) bool {
	top, _, _ := strings.Cut(test, "/")
	rest, ok := strings.CutPrefix(top, "TestHelper")
	return ok && (rest == "" || rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] == '_')
}

func main() {
	skips, failed, err := Summarize(os.Stdin, os.Stdout)
	fmt.Println(Line(skips))
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}
