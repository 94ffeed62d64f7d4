package gemini

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParsePolicy: no input makes the policy reader panic; every located string of a rule is a
// TOML string token at its offsets, and a rewrite of it reads back.
func FuzzParsePolicy(f *testing.F) {
	files, _ := filepath.Glob(rulesDir + "*/policies/*.toml")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("rule = [ { toolName = 'a__b', decision = \"deny\", priority = 5 } ]\n"))
	f.Add([]byte("[[rule]]\ntoolName = [\"a\", # c\n 'b']\ndecision = \"\"\"deny\"\"\"\npriority = 1\n[rule.x]\ny = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf := ParsePolicy("f.toml", data, ScopeUser)
		for _, c := range []Release{MustRelease("0.10.0"), MustRelease("0.32.1"), Latest} {
			pf.Check(c)
		}
		for _, r := range pf.Rules {
			for _, e := range append(append([]Entry(nil), r.ToolNames...), derefEntry(r.MCPName)...) {
				if e.Start < 0 {
					continue
				}
				if e.End > len(data) || e.Start >= e.End || (data[e.Start] != '"' && data[e.Start] != '\'') {
					t.Fatalf("entry %q at [%d,%d) is no string token", e.Value, e.Start, e.End)
				}
				out, err := ApplyEdits(data, []Edit{{Start: e.Start, End: e.End, New: tomlString("x")}})
				if err != nil {
					t.Fatal(err)
				}
				if ParsePolicy("f.toml", out, ScopeUser).SyntaxError != nil {
					t.Fatalf("replacing the token of %q breaks the file", e.Value)
				}
			}
		}
		Evaluate(Config{Release: Latest, Mode: ModeYolo, Policies: []*PolicyFile{pf}, Tools: []Tool{{"a", "b"}}})
	})
}

func derefEntry(e *Entry) []Entry {
	if e == nil {
		return nil
	}
	return []Entry{*e}
}

// FuzzParseSettings: no input makes the settings reader panic; located entries are JSON string
// tokens at their offsets.
func FuzzParseSettings(f *testing.F) {
	files, _ := filepath.Glob(rulesDir + "*/settings.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := ParseSettings("s.json", data, ScopeUser)
		if err != nil {
			return
		}
		for _, e := range append(append(append([]Entry(nil), sf.Exclude...), sf.Allowed...), sf.Core...) {
			if e.End > len(data) || e.Start >= e.End || data[e.Start] != '"' || data[e.End-1] != '"' {
				t.Fatalf("entry %q at [%d,%d) is no string token", e.Value, e.Start, e.End)
			}
		}
		Evaluate(Config{Release: Latest, Mode: ModeDefault, Settings: []*SettingsFile{sf}, Tools: []Tool{{"a", "b"}}})
	})
}
