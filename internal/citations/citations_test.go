// Package citations keeps every citation of the reference documents in docs/ (naming.md,
// schemes.md §A.4, …) resolvable: a `file.md` named in a Go comment, in a
// command's help text or in README.md must exist in docs/ (or, as a path, in the repository),
// each `§N.M` after it must be a heading of that file, and a quoted "text" right after a
// citation must occur in it. Links between the documents (`[x](file.md#anchor)`) must point at
// an existing file and heading.
package citations

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = "../.."

var (
	// mdToken is a file name or path ending in .md. A character before it that could belong to
	// a path (such as "*" in ".qwen/agents/*.md") leaves it out: that is a glob, not a citation.
	mdToken = regexp.MustCompile(`(^|[^A-Za-z0-9_./*<>-])([A-Za-z0-9_-][A-Za-z0-9_./-]*\.md)\b`)
	// section is a § reference: §2, §3.1, §A.4, §C.1.
	section = regexp.MustCompile(`§\s?([A-Z0-9]+(?:\.[0-9]+)*)`)
	// quoted is a "text" directly after a citation or section (spaces and a colon allowed).
	quoted = regexp.MustCompile(`^:?\s*"([^"\n]{2,80})"`)
)

// text is one piece of prose to check: a comment group, a string literal or a Markdown file.
type text struct {
	path string
	line int
	body string
}

// goTexts returns the comments of every .go file and the string literals of non-test files
// (help texts), in file order.
func goTexts(t *testing.T) map[string][]text {
	t.Helper()
	out := map[string][]text{}
	fset := token.NewFileSet()
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "fixtures" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || filepath.Base(filepath.Dir(p)) == "citations" && filepath.Base(p) == "citations_test.go" {
			return nil // this file's comments talk about citations in general
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, cg := range f.Comments {
			out[rel] = append(out[rel], text{rel, fset.Position(cg.Pos()).Line, cg.Text()})
		}
		if !strings.HasSuffix(p, "_test.go") {
			ast.Inspect(f, func(n ast.Node) bool {
				if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
					if s, err := strconv.Unquote(bl.Value); err == nil {
						out[rel] = append(out[rel], text{rel, fset.Position(bl.Pos()).Line, s})
					}
				}
				return true
			})
		}
		sort.SliceStable(out[rel], func(i, j int) bool { return out[rel][i].line < out[rel][j].line })
		return nil
	}))
	return out
}

// headings returns the heading lines of a Markdown file (without the leading #s).
func headings(body string) []string {
	var hs []string
	inFence := false
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(l, "#") {
			hs = append(hs, strings.TrimSpace(strings.TrimLeft(l, "#")))
		}
	}
	return hs
}

// hasSection reports whether some heading holds "§"+s not followed by more of a section number.
func hasSection(hs []string, s string) bool {
	for _, h := range hs {
		for i := 0; ; {
			j := strings.Index(h[i:], "§"+s)
			if j < 0 {
				break
			}
			end := i + j + len("§"+s)
			if end == len(h) || !(h[end] == '.' && end+1 < len(h) && h[end+1] >= '0' && h[end+1] <= '9') && !isAlnum(h[end]) {
				return true
			}
			i = end
		}
	}
	return false
}

func isAlnum(b byte) bool { return b < 0x80 && (unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b))) }

// normalize folds case and runs of white space, for "quoted text" look-ups.
func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// resolve finds the file a citation names: a bare name in docs/ or at the repository root; a
// path relative to the repository root or to the citing file.
func resolve(from, name string) (string, bool) {
	var tries []string
	if strings.Contains(name, "/") {
		tries = []string{filepath.Join(root, name), filepath.Join(root, filepath.Dir(from), name)}
	} else {
		tries = []string{filepath.Join(root, "docs", name), filepath.Join(root, name)}
	}
	for _, p := range tries {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// checkText checks every citation of one file's texts, in order: a § reference belongs to the
// .md file cited last before it in the same file. It returns the number of citations checked.
func checkText(t *testing.T, texts []text, read func(string) string) int {
	t.Helper()
	n := 0
	last, lastPath := "", ""
	for _, tx := range texts {
		type ref struct {
			pos       int
			file, sec string
			end       int
		}
		var refs []ref
		for _, m := range mdToken.FindAllStringSubmatchIndex(tx.body, -1) {
			refs = append(refs, ref{pos: m[4], file: tx.body[m[4]:m[5]], end: m[5]})
		}
		for _, m := range section.FindAllStringSubmatchIndex(tx.body, -1) {
			refs = append(refs, ref{pos: m[0], sec: tx.body[m[2]:m[3]], end: m[1]})
		}
		sort.Slice(refs, func(i, j int) bool { return refs[i].pos < refs[j].pos })
		for _, r := range refs {
			line := tx.line + strings.Count(tx.body[:r.pos], "\n")
			where := tx.path + ":" + strconv.Itoa(line)
			n++
			if r.file != "" {
				p, ok := resolve(tx.path, r.file)
				if !assert.True(t, ok, "%s cites %s, which is neither in docs/ nor in the repository", where, r.file) {
					last, lastPath = "", ""
					continue
				}
				last, lastPath = r.file, p
			} else {
				if !assert.NotEmpty(t, last, "%s: §%s follows no file.md citation in this file (write file.md §%s)", where, r.sec, r.sec) {
					continue
				}
				assert.True(t, hasSection(headings(read(lastPath)), r.sec), "%s cites %s §%s: %s has no heading with §%s", where, last, r.sec, lastPath, r.sec)
			}
			if q := quoted.FindStringSubmatch(tx.body[r.end:]); q != nil && lastPath != "" {
				assert.Contains(t, normalize(read(lastPath)), normalize(q[1]), "%s quotes %q from %s, which does not contain it", where, q[1], last)
			}
		}
	}
	return n
}

func TestCitationsResolve(t *testing.T) {
	cache := map[string]string{}
	read := func(p string) string {
		if s, ok := cache[p]; ok {
			return s
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		cache[p] = string(b)
		return cache[p]
	}
	total := 0
	for _, texts := range goTexts(t) {
		total += checkText(t, texts, read)
	}
	total += checkText(t, []text{{"README.md", 1, read(filepath.Join(root, "README.md"))}}, read)
	// The citations of the code base at the time of writing: far fewer means the scan broke.
	assert.Greater(t, total, 150, "citations found")
}

// mdLink is a Markdown link: its target (a relative path, or an address with a scheme, which is
// not checked) and/or an anchor.
var mdLink = regexp.MustCompile(`\]\(([^)\s#]*)(#[^)\s]+)?\)`)

// slug is GitHub's anchor for a heading: lower case, punctuation and symbols dropped (§ too),
// spaces to hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestDocLinksResolve: every relative link of README.md, docs/*.md and the generated
// docs/commands/*.md names an existing file (a .md file's anchor one of its headings); links
// with a scheme (https:, mailto:) are not followed.
func TestDocLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	sub, err := filepath.Glob(filepath.Join(root, "docs", "*", "*.md"))
	require.NoError(t, err)
	files = append(append(files, sub...), filepath.Join(root, "README.md"))
	links := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(body), -1) {
			if m[1] == "" && m[2] == "" || strings.Contains(m[1], ":") {
				continue
			}
			links++
			target := f
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(f), m[1])
			}
			if !strings.HasSuffix(target, ".md") {
				_, err := os.Stat(target)
				assert.NoError(t, err, "%s links to %s", f, m[0])
				continue
			}
			tb, err := os.ReadFile(target)
			if !assert.NoError(t, err, "%s links to %s", f, m[0]) || m[2] == "" {
				continue
			}
			var slugs []string
			for _, h := range headings(string(tb)) {
				slugs = append(slugs, slug(h))
			}
			assert.Contains(t, slugs, strings.TrimPrefix(m[2], "#"), "%s links to %s: no such heading in %s", f, m[0], target)
		}
	}
	assert.Greater(t, links, 10, "links found")
}

func TestHasSection(t *testing.T) {
	hs := []string{"§2 Permission rules", "§2.4 MCP matching", "§A.5 Worked vectors", "§B DSH"}
	for _, s := range []string{"2", "2.4", "A.5", "B"} {
		assert.True(t, hasSection(hs, s), s)
	}
	for _, s := range []string{"2.1", "A", "A.4", "3", "B.2"} {
		assert.False(t, hasSection(hs, s), s)
	}
}
