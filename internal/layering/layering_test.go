// Package layering checks the dependency rules of conventions.md §14 (in docs/) on the
// source itself, so a wrong import fails make test instead of being found in review.
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/sessionfix/sessionfix/"

// imports returns, for every package directory under the module root, its non-test imports.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root := "../.."
	out := map[string][]string{}
	fset := token.NewFileSet()
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "fixtures" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		for _, is := range f.Imports {
			v, _ := strconv.Unquote(is.Path.Value)
			out[rel] = append(out[rel], v)
		}
		return nil
	}))
	return out
}

func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

// engines are the storage engines: generic, they know no agent.
var engines = []string{"engine/jsonl", "engine/sqlite", "engine/postgres", "engine/rulefile"}

// rooms returns the agent rooms: the packages under agent/ that import agent (the
// contract), except agent/all (the list).
func rooms(all map[string][]string) []string {
	var out []string
	for pkg, imps := range all {
		if !under(pkg, "agent") || pkg == "agent/all" {
			continue
		}
		for _, imp := range imps {
			if imp == module+"agent" {
				out = append(out, pkg)
				break
			}
		}
	}
	return out
}

// TestEnginesKnowNoAgent: no engine imports an agent room, agent or agent/all, and no
// room imports another room (issue 10 item 1).
func TestEnginesKnowNoAgent(t *testing.T) {
	all := imports(t)
	rs := rooms(all)
	require.Contains(t, rs, "agent/codex")
	require.Contains(t, rs, "agent/qwen")
	for pkg, imps := range all {
		for _, imp := range imps {
			target := strings.TrimPrefix(imp, module)
			if target == imp {
				continue
			}
			for _, e := range engines {
				if under(pkg, e) {
					// An engine reaches only the store contract, mechanisms (internal/, and
					// jsonpos: a leaf of the standard library that provider shares, which may
					// not import internal/) and its own subpackages: that also keeps out agent
					// knowledge that is not a room (agent/qwen/settings, mcpname's naming
					// schemes, permission).
					// The PostgreSQL engine reads the SQLite engine's profile format (plain data)
					// and its per-value site finder: an engine, never a room.
					shared := e == "engine/postgres" && target == "engine/sqlite"
					assert.True(t, target == "store" || target == "jsonpos" || under(target, "internal") || under(target, e) || shared,
						"engine %s must not import %s (only store, jsonpos, internal/ and itself)", pkg, target)
					assert.False(t, target == "agent" || target == "agent/all", "engine %s must not import %s", pkg, target)
					for _, r := range rs {
						assert.False(t, under(target, r), "engine %s must not import the agent room %s", pkg, target)
					}
				}
			}
			for _, n := range []string{"audit", "rulefix"} {
				// What every agent's audit and rule fix share names no agent: the rooms hand
				// their plans and documents over through the command layer.
				for _, r := range rs {
					assert.False(t, under(pkg, n) && under(target, r), "%s must not import the agent room %s", pkg, target)
				}
			}
			for _, r := range rs {
				if under(pkg, r) {
					assert.False(t, under(target, "agent/all"), "agent room %s must not import the agent list %s", pkg, target)
					for _, o := range rs {
						assert.False(t, o != r && under(target, o), "agent room %s must not import the room %s", pkg, target)
					}
				}
			}
		}
	}
}

// TestNamingSitsBelowTheRooms: naming (the namer contract) imports only store and mcpname of
// the module, so every room can implement it; a room reaches the plan only through naming
// (never rewrite, pipeline, scan, check, audit or cmd), so the engine stays above the rooms
// (issue 10: namers in the rooms).
func TestNamingSitsBelowTheRooms(t *testing.T) {
	all := imports(t)
	require.Contains(t, all, "naming")
	for _, imp := range all["naming"] {
		if target, ok := strings.CutPrefix(imp, module); ok {
			assert.True(t, target == "store" || target == "mcpname", "naming must not import %s (only store and mcpname)", target)
		}
	}
	rs := rooms(all)
	usesNaming := 0
	for _, r := range rs {
		for pkg, imps := range all {
			if !under(pkg, r) {
				continue
			}
			for _, imp := range imps {
				target := strings.TrimPrefix(imp, module)
				if target == "naming" {
					usesNaming++
				}
				// reports is allowed: a leaf (TestReportsIsALeaf), the document model an agent's
				// audit plug-in builds its pages, tables and SARIF results with.
				for _, f := range []string{"rewrite", "pipeline", "scan", "check", "audit", "cmd"} {
					assert.False(t, under(target, f), "agent room %s must not import %s (it reaches the plan through naming)", pkg, target)
				}
			}
		}
	}
	assert.NotZero(t, usesNaming, "the rooms implement naming.Namer")
}

// TestReportsIsALeaf: reports (tables, HTML page, SARIF results and their writers) imports
// nothing of the module, so an agent room's audit plug-in may build its documents with it
// (agent/claude/auditdocument.go), and agent's AuditResult carries them to the command;
// the store contract and the engines still never import it.
func TestReportsIsALeaf(t *testing.T) {
	all := imports(t)
	require.Contains(t, all, "reports")
	rs := rooms(all)
	for pkg, imps := range all {
		for _, imp := range imps {
			target, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if under(pkg, "reports") {
				assert.True(t, under(target, "reports"), "reports must not import %s (it is a leaf)", target)
			}
			if under(target, "reports") && (under(pkg, "store") || under(pkg, "engine") || under(pkg, "agent")) {
				inRoom := pkg == "agent" // agent.AuditResult: an audit's tables and documents
				for _, r := range rs {
					inRoom = inRoom || under(pkg, r)
				}
				assert.True(t, inRoom, "%s must not import %s (only an agent room's audit plug-in and agent's AuditResult may)", pkg, target)
			}
		}
	}
}

// leaves are the packages that import nothing of the module (the standard library and
// third-party modules only), so every layer may use them; their package comments say "a leaf"
// and point here rather than list imports.
var leaves = []string{"mcpname", "jsonpos", "reports", "internal/owner", "internal/secret", "internal/usage",
	"internal/exitcode", "internal/helpformat", "internal/benchcorpus"}

func TestLeavesImportNothingOfTheModule(t *testing.T) {
	all := imports(t)
	for _, leaf := range leaves {
		require.Contains(t, all, leaf)
		for _, imp := range all[leaf] {
			target, ok := strings.CutPrefix(imp, module)
			assert.False(t, ok, "%s imports %s: it is a leaf (imports nothing of the module)", leaf, target)
		}
	}
}

func TestDependenciesPointInward(t *testing.T) {
	all := imports(t)
	require.Contains(t, all, "mcpname")
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"mcpname", []string{"permission", "store", "engine", "agent", "scan", "rewrite", "audit", "reports", "cmd", "internal", "provider", "naming"}},
		// naming is the namer contract below rewrite and the rooms.
		{"naming", []string{"permission", "scan", "rewrite", "pipeline", "check", "audit", "reports", "cmd", "internal", "inventory", "provider"}},
		// jsonpos (where an encoding/json error points) is a leaf: the standard library only.
		{"jsonpos", []string{"mcpname", "naming", "permission", "provider", "check", "store", "engine", "agent", "internal", "inventory", "mcpconfig", "mcpinventory", "scan", "rewrite", "audit", "rulefix", "reports", "pipeline", "cmd"}},
		// provider is the provider rule table: pure data over mcpname.
		{"provider", []string{"permission", "store", "engine", "agent", "scan", "rewrite", "audit", "reports", "cmd", "internal"}},
		// check applies the provider table to a plan: no discovery, no output.
		{"check", []string{"scan", "audit", "reports", "cmd"}},
		{"permission", []string{"store", "engine", "agent", "scan", "rewrite", "audit", "reports", "cmd"}},
		// store (the contract, the engines, the rooms) never reaches the report writers, except
		// a room's audit plug-in (TestReportsIsALeaf).
		{"store", []string{"scan", "rewrite", "audit", "cmd", "inventory"}},
		{"engine", []string{"scan", "rewrite", "audit", "cmd", "inventory"}},
		{"agent", []string{"scan", "rewrite", "audit", "cmd", "inventory"}},
		// internal/fileio is the file-replacement engine under the store backends.
		{"internal/fileio", []string{"engine/jsonl", "engine/sqlite", "agent/all", "inventory", "scan", "rewrite", "audit", "reports", "cmd"}},
		{"internal/splice", []string{"engine/jsonl", "engine/sqlite", "agent/all", "inventory", "internal/fileio", "scan", "rewrite", "audit", "reports", "cmd"}},
		// internal/usage is the usage error of the libraries: the standard library only.
		{"internal/usage", []string{"mcpname", "provider", "check", "permission", "store", "engine", "agent", "internal/fileio", "internal/splice", "internal/jsonscan", "inventory", "scan", "rewrite", "audit", "reports", "pipeline", "cmd"}},
		// internal/helpformat lays out --help text for a terminal: it knows no flag, command or
		// agent (the standard library and go-runewidth only).
		{"internal/helpformat", []string{"mcpname", "naming", "provider", "check", "permission", "store", "engine", "agent", "internal/fileio", "internal/exitcode", "inventory", "scan", "rewrite", "audit", "rulefix", "reports", "pipeline", "fleet", "cmd"}},
		{"internal/jsonscan", []string{"store", "engine", "agent", "inventory", "scan", "rewrite", "audit", "reports", "cmd"}},
		// inventory holds tool inventories and the MCP client of --discover: no storage engine.
		{"inventory", []string{"engine/jsonl", "engine/sqlite", "agent/all", "scan", "rewrite", "audit", "reports", "cmd"}},
		{"reports", []string{"store", "engine", "agent", "scan", "rewrite", "pipeline", "cmd"}},
		// pipeline is the run summary and report schema over scan and rewrite: no audit, no CLI.
		{"pipeline", []string{"audit", "rulefix", "cmd"}},
		// rulefix is fix --rules as a library, above audit and rewrite: no scan, no report
		// writer, no CLI, and nothing below it imports it.
		{"rulefix", []string{"scan", "pipeline", "reports", "cmd"}},
		{"scan", []string{"rewrite", "audit", "reports", "cmd"}},
		// fleet is whose findings a run reports and the fleet database's rows of its SARIF
		// results: no agent, no store read, no run.
		{"fleet", []string{"agent", "scan", "rewrite", "audit", "rulefix", "pipeline", "engine/jsonl", "engine/postgres", "cmd"}},
		{"rewrite", []string{"scan", "audit", "rulefix", "reports", "cmd"}},
		// runlog is a run's durable record and its undo: below rewrite (which records its
		// rewrites in it) and above the store contract; it knows no agent, no engine (undo
		// reopens stores through the Opener it is given), no plan and no report.
		{"runlog", append([]string{"naming", "mcpname", "agent", "scan", "rewrite", "audit", "rulefix", "reports", "pipeline", "fleet", "inventory", "permission", "cmd"}, engines...)},
		// Nothing under the run's record reaches it: the store contract, the engines, the rooms
		// and internal/fileio know no run directory.
		{"store", []string{"runlog"}},
		{"engine", []string{"runlog"}},
		{"agent", []string{"runlog"}},
		{"internal", []string{"runlog"}},
		{"scan", []string{"runlog"}},
		// auditrun is the audit command as a library, above audit and the rooms: no scan, no
		// rewrite, no fix --rules, no CLI.
		{"auditrun", []string{"scan", "rewrite", "rulefix", "cmd", "engine/jsonl", "engine/postgres"}},
		// nothing below the command runs an audit.
		{"audit", []string{"auditrun"}},
		{"pipeline", []string{"auditrun"}},
		{"agent", []string{"auditrun"}},
		// audit is what every agent's audit shares: the rule semantics are the rooms' plug-ins.
		{"audit", []string{"scan", "rewrite", "rulefix", "cmd", "store", "engine", "agent", "inventory", "mcpinventory", "pipeline"}},
		// rewrite, scan and audit reach the storage engines only through the store contract
		// and agent/all: each engine owns its byte layout (issue 10 item 5).
		{"rewrite", engines},
		{"scan", engines},
		{"audit", engines},
		// pipeline (the engine as a library) asks a store for its profile through
		// store.Profiled, not the engine's type.
		{"pipeline", engines},
		{"rulefix", engines},
	}
	for pkg, imps := range all {
		for _, imp := range imps {
			if !strings.HasPrefix(imp, module) {
				if imp == "github.com/mattn/go-sqlite3" {
					assert.True(t, under(pkg, "engine/sqlite"), "%s imports the SQLite driver; only engine/sqlite may", pkg)
				}
				if strings.HasPrefix(imp, "github.com/jackc/pgx/") {
					assert.True(t, under(pkg, "engine/postgres"), "%s imports the PostgreSQL driver (%s); only engine/postgres may", pkg, imp)
				}
				continue
			}
			target := strings.TrimPrefix(imp, module)
			if under(target, "engine/sqlite/sqlitetest") {
				assert.True(t, under(pkg, "engine/sqlite/sqlitetest") || isBench(pkg),
					"%s imports %s: test-only SQLite code is for tests, the demo tool and benchmarks", pkg, target)
			}
			assert.False(t, under(target, "cmd"), "%s imports %s: nothing imports cmd", pkg, target)
			for _, r := range rules {
				if !under(pkg, r.pkg) {
					continue
				}
				for _, f := range r.forbidden {
					assert.False(t, under(target, f), "%s must not import %s", pkg, target)
				}
			}
		}
	}
}

// TestMCPConfigIsNeutral: mcpconfig (the "mcpServers" reader and the MCP server type every
// agent room shares) imports nothing of the module but internal/secret and internal/owner (who
// owns a config: leaves of the standard library), so rooms, inventory,
// pipeline and audit can all use it; the layers that hold no config — naming rules, provider
// table, check, scan, rewrite, reports and the storage engines — do not import it.
func TestMCPConfigIsNeutral(t *testing.T) {
	all := imports(t)
	require.Contains(t, all, "mcpconfig")
	for _, imp := range all["mcpconfig"] {
		if target, ok := strings.CutPrefix(imp, module); ok {
			assert.Contains(t, []string{"internal/secret", "internal/owner"}, target, "mcpconfig must not import %s (only internal/secret and internal/owner)", target)
		}
	}
	users := 0
	for pkg, imps := range all {
		for _, imp := range imps {
			if imp != module+"mcpconfig" {
				continue
			}
			users++
			for _, f := range append([]string{"mcpname", "naming", "permission", "provider", "check", "scan", "rewrite", "reports"}, engines...) {
				assert.False(t, under(pkg, f), "%s must not import mcpconfig", pkg)
			}
		}
	}
	assert.NotZero(t, users)
}

// TestFileMechanismsSeeOnlyTheContract: internal/fileio (the crash-safe file replace) and
// internal/splice (the byte-exact token edit) import nothing of the module but the store
// contract package itself (a leaf: it imports nothing of the module), and splice the JSON
// lexer: no agent room, no engine, no agent, no run record. The contract does not
// import them back (its vocabulary — Change, FileState, the in-use and changed errors — is
// what they return; pointing the import the other way would make the contract import a
// mechanism).
func TestFileMechanismsSeeOnlyTheContract(t *testing.T) {
	all := imports(t)
	allowed := map[string][]string{
		"internal/fileio": {"store", "internal/owner"},
		"internal/splice": {"store", "internal/jsonscan"},
	}
	for pkg, ok := range allowed {
		require.Contains(t, all, pkg)
		for _, imp := range all[pkg] {
			if target, in := strings.CutPrefix(imp, module); in {
				assert.Contains(t, ok, target, "%s must not import %s (only %v)", pkg, target, ok)
			}
		}
	}
	for _, imp := range all["store"] {
		assert.False(t, strings.HasPrefix(imp, module), "the store contract imports %s: it must stay a leaf of the module", imp)
	}
}

// TestMCPInventoryIsNeutral: mcpinventory (the tool inventory's data, its file parser, Infer)
// imports only mcpname and mcpconfig of the module and starts nothing, so an agent room's
// audit plug-in may take an inventory; the MCP client stays in inventory, which no store
// package imports (TestDependenciesPointInward).
func TestMCPInventoryIsNeutral(t *testing.T) {
	all := imports(t)
	require.Contains(t, all, "mcpinventory")
	for _, imp := range all["mcpinventory"] {
		if target, ok := strings.CutPrefix(imp, module); ok {
			assert.True(t, target == "mcpname" || target == "mcpconfig", "mcpinventory must not import %s (only mcpname and mcpconfig)", target)
		}
		assert.NotEqual(t, "github.com/modelcontextprotocol/go-sdk/mcp", imp, "mcpinventory must not import the MCP client SDK")
	}
	for pkg, imps := range all {
		for _, imp := range imps {
			if imp == module+"mcpinventory" {
				for _, f := range append([]string{"mcpname", "mcpconfig", "naming", "permission", "provider", "reports"}, engines...) {
					assert.False(t, under(pkg, f), "%s must not import mcpinventory", pkg)
				}
			}
		}
	}
}

// commandLibraries are the libraries only the command imports: what cmd/sessionfix was
// before issue 24 item 4 moved it out (the text reports, the names command, the --quiet
// recording, the command-line checks), each with the module packages it may import
// (nil: none).
var commandLibraries = map[string][]string{
	"textreport":        {"agent", "agent/all", "check", "internal/exitcode", "naming", "internal/owner", "pipeline", "pipeline/report", "reports", "rewrite", "runlog", "store"},
	"nameinfo":          {"internal/jsonscan", "mcpname", "pipeline/report", "reports", "store"},
	"internal/quiet":    nil,
	"internal/cliargs":  nil,
	"internal/progress": nil,
	"helptext":          {"agent", "agent/all", "reports"},
}

// TestCommandLibrariesStayBelowTheCommand: the command's libraries import only what
// commandLibraries lists (no storage engine, no agent room, no audit, no run), and nothing
// but cmd imports them.
func TestCommandLibrariesStayBelowTheCommand(t *testing.T) {
	all := imports(t)
	for pkg, allowed := range commandLibraries {
		require.Contains(t, all, pkg)
		for _, imp := range all[pkg] {
			if target, ok := strings.CutPrefix(imp, module); ok {
				assert.Contains(t, allowed, target, "%s must not import %s (only %v)", pkg, target, allowed)
			}
		}
	}
	for pkg, imps := range all {
		for _, imp := range imps {
			target, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if _, lib := commandLibraries[target]; lib {
				assert.True(t, under(pkg, "cmd/sessionfix"), "%s imports %s: only the command does", pkg, target)
			}
		}
	}
}

// TestReportTypesBelowTheEngine: pipeline/report (the report types of scan, fix, check and
// undo, their tables and SARIF results) does not import the engine (pipeline), discovery or
// the command's libraries: the engine fills the reports, never the other way round (issue 24
// item 4).
func TestReportTypesBelowTheEngine(t *testing.T) {
	all := imports(t)
	require.Contains(t, all, "pipeline/report")
	require.Contains(t, all["pipeline"], module+"pipeline/report")
	for _, imp := range all["pipeline/report"] {
		target, ok := strings.CutPrefix(imp, module)
		if !ok {
			continue
		}
		for _, f := range []string{"scan", "audit", "auditrun", "rulefix", "inventory", "fleet", "cmd"} {
			assert.False(t, under(target, f), "pipeline/report must not import %s", target)
		}
		assert.NotEqual(t, "pipeline", target, "pipeline/report must not import the engine")
		for _, e := range engines {
			assert.False(t, under(target, e), "pipeline/report must not import the engine %s", target)
		}
	}
}
