// Package htmltest drives a real headless Chromium for tests of the HTML reports: it loads a
// page (scripts on), and returns the DOM after the scripts ran, or a screenshot. Tests that
// use it skip, with a message saying how to enable them, when no Chromium is installed; with
// CI=true (set by .ci/run, which installs Debian's chromium package) they fail instead, so CI
// never passes without having run them.
//
// Only tests use it.
package htmltest

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Names are the executables looked up on PATH, in order.
var Names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Chromium returns the path of a Chromium (or Chrome) executable. When there is none it skips
// the test, or fails it when the environment has CI=true (see Missing).
func Chromium(t testing.TB) string {
	t.Helper()
	p, msg, fatal := find(exec.LookPath, os.Getenv("CI"))
	if p != "" {
		return p
	}
	if fatal {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// find looks up Names with lookPath; with none found it returns the message to give and
// whether the test must fail (ci is "true") rather than skip.
func find(lookPath func(string) (string, error), ci string) (path, msg string, fatal bool) {
	for _, n := range Names {
		if p, err := lookPath(n); err == nil {
			return p, "", false
		}
	}
	if ci == "true" {
		return "", "CI=true but no chromium or chromium-browser on PATH: the HTML report cannot be checked in a " +
			"real browser, and CI must run these tests (.ci/run installs Debian's chromium package when it runs as root)", true
	}
	return "", "skipped: no chromium or chromium-browser on PATH, so the HTML report is not checked in a real browser " +
		"(install it, e.g. apt-get install chromium, to run this test; with CI=true this test fails instead)", false
}

// FileURL returns the file:// URL of path with the given fragment ("" = none).
func FileURL(t testing.TB, path, fragment string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("file URL of %s: %v", path, err)
	}
	u := "file://" + filepath.ToSlash(abs)
	if fragment != "" {
		u += "#" + fragment
	}
	return u
}

// run starts Chromium headless with a fresh profile, no network services, and the extra args.
func run(t testing.TB, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// DumpDOM loads url and returns the serialized DOM after its scripts ran.
func DumpDOM(t testing.TB, bin, url string) string {
	t.Helper()
	return string(run(t, bin, "--dump-dom", url))
}

// Screenshot loads url and writes a PNG of a width×height window to path.
func Screenshot(t testing.TB, bin, url, path string, width, height int) {
	t.Helper()
	run(t, bin, "--hide-scrollbars", "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height), "--screenshot="+path, url)
}

// Row is one table row of a dumped DOM.
type Row struct {
	Hidden bool
	// Cells are the text contents of the row's td cells (entities decoded).
	Cells []string
}

var (
	sectionRE = regexp.MustCompile(`(?s)<section id="([^"]+)"[^>]*>(.*?)</section>`)
	rowRE     = regexp.MustCompile(`(?s)<tr( hidden="")?>(.*?)</tr>`)
	cellRE    = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	shownRE   = regexp.MustCompile(`<span class="shown" data-shown="">([^<]*)</span>`)
)

// Section returns the body rows of the section with the given id and its "rows shown" text.
// Cells hold text only and <wbr> (the page nests no other markup in a cell), so <wbr> is
// dropped, entities are decoded and any other tag would be kept verbatim and make the
// comparison fail.
func Section(t testing.TB, dom, id string) (rows []Row, shown string) {
	t.Helper()
	for _, m := range sectionRE.FindAllStringSubmatch(dom, -1) {
		if m[1] != id {
			continue
		}
		body := m[2]
		if s := shownRE.FindStringSubmatch(body); s != nil {
			shown = s[1]
		}
		if i := strings.Index(body, "<tbody>"); i >= 0 {
			body = body[i:]
		}
		for _, r := range rowRE.FindAllStringSubmatch(body, -1) {
			row := Row{Hidden: r[1] != ""}
			for _, c := range cellRE.FindAllStringSubmatch(r[2], -1) {
				// <wbr> marks where a long name may wrap: not text.
				row.Cells = append(row.Cells, html.UnescapeString(strings.ReplaceAll(c[1], "<wbr>", "")))
			}
			rows = append(rows, row)
		}
		return rows, shown
	}
	t.Fatalf("section %q not in the DOM", id)
	return nil, ""
}

// Visible returns the rows that are not hidden.
func Visible(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if !r.Hidden {
			out = append(out, r)
		}
	}
	return out
}

var (
	scriptRE = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	styleRE  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	tagRE    = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9-]*)`)
)

// Tags counts the element names of a document outside the contents of its script and style
// elements.
func Tags(doc string) map[string]int {
	doc = scriptRE.ReplaceAllString(doc, "<script></script>")
	doc = styleRE.ReplaceAllString(doc, "<style></style>")
	tags := map[string]int{}
	for _, m := range tagRE.FindAllStringSubmatch(doc, -1) {
		tags[strings.ToLower(m[1])]++
	}
	return tags
}

// overflowJS measures, after layout, every section's table against the window: the ids of the
// sections whose table is wider than the document's visible width (off-screen, or scrolling
// within its section), and the document's own overflow, written into the DOM as
// <pre id="overflow">.
const overflowJS = `(function () {
  var width = document.documentElement.clientWidth, out = [];
  document.querySelectorAll("section[data-section]").forEach(function (s) {
    var t = s.querySelector("table");
    if (!t) { return; }
    var r = t.getBoundingClientRect();
    if (r.right > width + 0.5 || t.scrollWidth > t.parentElement.clientWidth + 0.5) {
      out.push(s.id + " " + Math.round(r.width) + "px");
    }
  });
  if (document.documentElement.scrollWidth > width) { out.push("document " + document.documentElement.scrollWidth + "px"); }
  var pre = document.createElement("pre");
  pre.id = "overflow";
  pre.textContent = out.join("\n");
  document.body.appendChild(pre);
})();`

var (
	cspRE      = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`)
	overflowRE = regexp.MustCompile(`(?s)<pre id="overflow">(.*?)</pre>`)
)

// Overflow loads the HTML page at path in a width-pixel-wide window and returns what is wider
// than the window: "<section id> <table width>px" for each section whose table does not fit
// (it would be off-screen, or scroll within its section), and "document <width>px" when the
// page itself scrolls sideways; nothing when everything fits. The page is loaded from a copy
// with a measuring script added (its Content-Security-Policy removed from the copy, so the
// script may run; the page's own script runs as well).
func Overflow(t testing.TB, bin, path string, width int) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("overflow: %v", err)
	}
	page := cspRE.ReplaceAllString(string(b), "")
	page = strings.Replace(page, "</body>", "<script>"+overflowJS+"</script>\n</body>", 1)
	cp := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(cp, []byte(page), 0o644); err != nil {
		t.Fatalf("overflow: %v", err)
	}
	dom := string(run(t, bin, "--window-size="+strconv.Itoa(width)+",900", "--dump-dom", FileURL(t, cp, "")))
	m := overflowRE.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("overflow: the measuring script did not run (no #overflow in the DOM of %s)", path)
	}
	if strings.TrimSpace(m[1]) == "" {
		return nil
	}
	return strings.Split(strings.TrimSpace(html.UnescapeString(m[1])), "\n")
}
