package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests keep the harness from rotting (make test runs them); the comparison itself is
// run by hand (go run ./scripts/cmpbin).

func TestSplitWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"scan  --format json home/.x", []string{"scan", "--format", "json", "home/.x"}},
		{`names 'a b' "c \"d\"" e\ f ''`, []string{"names", "a b", `c "d"`, "e f", ""}},
		{`@append f '{"a":1}'`, []string{"@append", "f", `{"a":1}`}},
	} {
		got, err := splitWords(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{`a 'b`, `a "b`} {
		_, err := splitWords(bad)
		assert.Error(t, err, bad)
	}
}

func TestParseCase(t *testing.T) {
	c, err := parseCase(`x/y old: fix --apply --yes a ;; V=1 W=$ROOT/w <in >out undo --last ;; @cd sub ;; @append f 'line 2'`)
	require.NoError(t, err)
	assert.Equal(t, "x/y", c.Name)
	require.Len(t, c.Steps, 4)
	assert.Equal(t, Step{Old: true, Args: []string{"fix", "--apply", "--yes", "a"}}, c.Steps[0])
	assert.Equal(t, Step{Env: []string{"V=1", "W=$ROOT/w"}, Stdin: "in", Stdout: "out", Args: []string{"undo", "--last"}}, c.Steps[1])
	assert.Equal(t, Step{Builtin: "@cd", Args: []string{"sub"}}, c.Steps[2])
	assert.Equal(t, "@append f 'line 2'", c.Steps[3].String())
	// A flag with "=" is an argument, not an environment variable.
	c, err = parseCase(`n audit --settings user=a.json`)
	require.NoError(t, err)
	assert.Equal(t, []string{"audit", "--settings", "user=a.json"}, c.Steps[0].Args)

	for _, bad := range []string{"n", "n scan ;; ;; runs", "n @cd", "n old: @cd x", "n @rm x"} {
		_, err := parseCase(bad)
		assert.Error(t, err, bad)
	}
	_, err = parseCases("cases.txt", []byte("a scan\n# c\n\nb scan\na runs\n"))
	assert.ErrorContains(t, err, "cases.txt:5: case a is also on line 1")
}

func TestGenerate(t *testing.T) {
	matrix := `# comment
axis f: t= | j=--format json
auto fx: fixtures
case s/{fx}/{f}: scan {f} {fx}
case plain: runs ;; undo --last
`
	got, err := generate([]byte(matrix), []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"s/a/t scan fx/a",
		"s/a/j scan --format json fx/a",
		"s/b/t scan fx/b",
		"s/b/j scan --format json fx/b",
		"plain runs ;; undo --last",
	}, got)

	for bad, want := range map[string]string{
		"case s/{nope}: scan":                         `unknown axis "nope"`,
		"axis f: t=\ncase s: scan {f}":                `axis "f" is in the command but not in the name`,
		"axis f: t= | u=\ncase s/{f}: a\ncase s/t: b": "case s/t generated twice",
		"axis f: novalue":                             "is not LABEL=VALUE",
		"case s: old:":                                "empty step",
		"bogus x: y":                                  `unknown keyword "bogus"`,
	} {
		_, err := generate([]byte(bad), nil)
		assert.ErrorContains(t, err, want, bad)
	}
}

// TestCommittedCases: the committed case list parses and holds at least 500 cases; the matrix
// generates at least as many over the repository's fixtures (a cases.txt older than the matrix
// is only noted by a run: a helper adding fixtures need not regenerate it).
func TestCommittedCases(t *testing.T) {
	cases, err := readCasesFile("cases.txt")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(cases), 500)
	gen, err := generateFromFile("../..", "matrix.txt")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(gen), 500)
	b, err := os.ReadFile("cases.txt")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), casesHeader), "cases.txt is written by -gen")
	layout, err := os.ReadFile("layout.txt")
	require.NoError(t, err)
	// Every source the layout names exists (a moved fixture is found here, not in a run).
	for _, l := range strings.Split(string(layout), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		srcs := f[2:]
		if f[0] == "run" {
			srcs = f[2:3]
		}
		for _, s := range srcs {
			_, err := os.Stat(filepath.Join("../..", s))
			assert.NoError(t, err, l)
		}
	}
}

func TestNormalize(t *testing.T) {
	root, tmp := "/tmp/cmpbin-1/slots/0/root", "/tmp/cmpbin-1"
	start := time.Now()
	n := &normalizer{paths: []string{root, tmp}, names: []string{"$ROOT", "$TMP"}, start: start}
	now := start.UTC().Format(time.RFC3339Nano)
	in := "run 20261206T012851Z-5e60 in " + root + "/state at " + now + " took in 1.5s; stub " + tmp +
		"/bin/mcp-stub; fixture 2026-11-30T18:55:07.581Z; runs " + start.UTC().Format("2006-01-02 15:04:05Z") +
		"; backup " + root + "/state/runs/x/backups/0003-a.jsonl"
	assert.Equal(t, "run RUNID in $ROOT/state at TIME took in DUR; stub $TMP/bin/mcp-stub; fixture 2026-11-30T18:55:07.581Z; runs TIME"+
		"; backup $ROOT/state/runs/x/backups/NNNN-a.jsonl", n.text(in))
	assert.Equal(t, "state/sessionfix/runs/RUNID/backups/NNNN-a.jsonl", n.path("state/sessionfix/runs/20261206T012851Z-5e60/backups/0012-a.jsonl"))

	// A base64 JSON member is compared decoded, normalized inside.
	blob := base64.StdEncoding.EncodeToString([]byte(`{"rows_file":"` + root + `/state/runs/20261206T012851Z-5e60/x"}`))
	assert.Equal(t, `"verify": "base64:{"rows_file":"$ROOT/state/runs/RUNID/x"}"`, n.text(`"verify": "`+blob+`"`))

	// A manifest (or plan) loses its seal; a journal its seals, temp digits and line order.
	manifest := string(manifestSeal) + strings.Repeat("a", 64) + "\",\n  \"x\": 1\n}\n"
	assert.Equal(t, string(manifestSeal)+"SEAL\",\n  \"x\": 1\n}\n", string(n.file("manifest.json", []byte(manifest))))
	line := func(sum, ev, digits string) string {
		return `{"sum":"sha256:` + sum + `","event":"` + ev + `","path":"` + root + `/d/.s.jsonl` + digits + `","store":"` + root + `/d/s.jsonl"}` + "\n"
	}
	j1 := line(strings.Repeat("1", 64), "temp", "123456789012") + line(strings.Repeat("2", 64), "commit", "42")
	j2 := line(strings.Repeat("3", 64), "commit", "9") + line(strings.Repeat("4", 64), "temp", "5")
	assert.Equal(t, string(n.file("journal.jsonl", []byte(j1))), string(n.file("journal.jsonl", []byte(j2))))
	assert.Contains(t, string(n.file("journal.jsonl", []byte(j1))), `"path":"$ROOT/d/.s.jsonlTEMP"`)
	// Elsewhere a line order is kept, and binary content is compared as it is.
	assert.NotEqual(t, string(n.file("other.jsonl", []byte(j1))), string(n.file("other.jsonl", []byte(j2))))
	bin := []byte("SQLite format 3\x00" + root)
	assert.Equal(t, bin, n.file("x.db", bin))
}

func TestRelocateRun(t *testing.T) {
	seal := func(b, prefix []byte) []byte {
		c := bytes.Clone(b)
		copy(c[len(prefix):], zeroDigits)
		s := sha256.Sum256(c)
		hex.Encode(c[len(prefix):], s[:])
		return c
	}
	sealed := func(b, prefix []byte) bool {
		return bytes.Equal(seal(b, prefix), b)
	}
	m := seal([]byte(string(manifestSeal)+string(zeroDigits)+"\",\n  \"roots\": [\"/old/place/root\"]\n}\n"), manifestSeal)
	got := relocateRun(m, "/old/place", "/new/dir")
	assert.Contains(t, string(got), `"/new/dir/root"`)
	assert.True(t, sealed(got, manifestSeal))

	l1 := seal([]byte(string(journalSeal)+string(zeroDigits)+`","path":"/old/place/a"}`), journalSeal)
	l2 := seal([]byte(string(journalSeal)+string(zeroDigits)+`","path":"/old/place/bb"}`), journalSeal)
	got = relocateRun(append(append(append(l1, '\n'), l2...), '\n'), "/old/place", "/n")
	lines := bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n"))
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.True(t, sealed(l, journalSeal), string(l))
		assert.Contains(t, string(l), `"/n/`)
	}
}

// TestLayout: every directive of applyLayout on a small repository.
func TestLayout(t *testing.T) {
	repo, dst := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, p), []byte(s), 0o644))
	}
	write("fixtures/one/a.json", "{}")
	write("fixtures/one/sub/db.sql", "CREATE TABLE t(x);")
	write("fixtures/two/b.jsonl", "x\n")
	write("data/cfg.json", `{"command": "$STUB"}`)
	write("runs/st/runs/r/manifest.json", "m")
	var built []string
	build := func(d string, sqls []string) error {
		rel, _ := filepath.Rel(dst, d)
		built = append(built, filepath.ToSlash(rel)+" <- "+filepath.Base(sqls[0]))
		return os.WriteFile(d, []byte("db"), 0o644)
	}
	layout := `# comment
copy home/.x fixtures/one
text disc/cfg.json data/cfg.json
sqlite home/x.db fixtures/one/sub/db.sql
fixtures fx
run old/r runs /tmp/was
mkdir empty
`
	rel, err := applyLayout([]byte(layout), repo, dst, map[string]string{"$STUB": "/bin/stub"}, build)
	require.NoError(t, err)
	assert.Equal(t, []relocate{{dir: "old/r", was: "/tmp/was"}}, rel)
	assert.Equal(t, []string{"home/x.db <- db.sql", "fx/one/sub/db.db <- db.sql"}, built)
	for _, p := range []string{"home/.x/a.json", "home/.x/sub/db.sql", "fx/one/a.json", "fx/two/b.jsonl", "old/r/st/runs/r/manifest.json"} {
		assert.FileExists(t, filepath.Join(dst, p))
	}
	assert.DirExists(t, filepath.Join(dst, "empty"))
	cfg, err := os.ReadFile(filepath.Join(dst, "disc/cfg.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"command": "/bin/stub"}`, string(cfg))

	require.NoError(t, fixModesAndTimes(dst))
	fi, err := os.Stat(filepath.Join(dst, "fx/two/b.jsonl"))
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Before(baseMtime.Add(time.Hour)))

	_, err = applyLayout([]byte("copy a"), repo, dst, nil, build)
	assert.ErrorContains(t, err, "line 1")
	_, err = applyLayout([]byte("run a b relative"), repo, dst, nil, build)
	assert.ErrorContains(t, err, "/ABSOLUTE/DIR")
}

// TestCompareCase runs a case with fake binaries (shell scripts): the same script twice is
// identical although it prints its root, a run id and the time and writes a file holding them;
// a script that writes one other byte, exits otherwise or keeps no mtime is found.
func TestCompareCase(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	tmp := t.TempDir()
	w := &workspace{tmp: tmp, start: time.Now(), template: filepath.Join(tmp, "template"), stub: "/bin/true"}
	require.NoError(t, os.MkdirAll(filepath.Join(w.template, "home"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.template, "home", "store.jsonl"), []byte("old\n"), 0o644))
	require.NoError(t, fixModesAndTimes(w.template))
	script := func(name, body string) string {
		p := filepath.Join(tmp, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
		return p
	}
	const common = `id=$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$XDG_STATE_HOME/runs/$id"
echo "run $id at $(date -u +%Y-%m-%dT%H:%M:%SZ) in $PWD, home $HOME, args $*"
echo "{\"dir\":\"$PWD\",\"run\":\"$id\"}" > "$XDG_STATE_HOME/runs/$id/manifest.json"
`
	w.oldBin = script("old", common+"printf 'new\\n' > home/.tmp && mv home/.tmp home/store.jsonl\n")
	same := script("same", common+"printf 'new\\n' > home/.tmp && mv home/.tmp home/store.jsonl\n")
	other := script("other", common+"printf 'nev\\n' > home/.tmp && mv home/.tmp home/store.jsonl\n")
	exit3 := script("exit3", common+"printf 'new\\n' > home/.tmp && mv home/.tmp home/store.jsonl; exit 3\n")
	touch := script("touch", common+"printf 'new\\n' > home/.tmp && mv home/.tmp home/store.jsonl; touch -d 2000-01-01 home/store.jsonl\n")

	c, err := parseCase("t/one fix --apply home ;; @append home/store.jsonl more ;; old: runs")
	require.NoError(t, err)
	s, err := w.newSlot(0)
	require.NoError(t, err)
	for _, tc := range []struct {
		bin     string
		classes []string
		want    string
	}{
		{same, nil, ""},
		{other, []string{"files"}, `home/store.jsonl content differs: size 4, new 4`},
		{exit3, []string{"exit"}, "exit 0, new 3"},
		{touch, []string{"files"}, `mtime "", new "2000-01-01T00:00:00Z"`},
	} {
		w.newBin = tc.bin
		sum := &summary{byClass: map[string]int{}, codes: map[int]int{}}
		rep, err := w.compareCase(context.Background(), s, c, sum, options{})
		require.NoError(t, err)
		assert.Equal(t, 1, sum.cases)
		assert.Equal(t, 2, sum.steps, "the builtin is not a command")
		if tc.classes == nil {
			assert.Empty(t, rep)
			assert.Equal(t, 1, sum.identical)
			continue
		}
		assert.Equal(t, 1, sum.different, rep)
		assert.Contains(t, rep, tc.want)
		for _, cl := range tc.classes {
			assert.Equal(t, 1, sum.byClass[cl], rep)
		}
	}
}
