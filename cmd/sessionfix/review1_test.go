package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFixRulesBrokenSettingsFileIsAProblem: a rule file that is not valid JSON is an error naming
// file, line and column on stderr (once, the path not doubled), the other rule files are still
// migrated, exit 3. Before, fix --rules panicked (nil RuleSnapshot) after printing the error with
// its path twice.
func TestFixRulesBrokenSettingsFileIsAProblem(t *testing.T) {
	env := testEnv(t)
	dir := claudeRulesCopy(t)
	inv, err := filepath.Abs("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	broken := filepath.Join(dir, "project-settings", "lab", "settings.json")
	require.NoError(t, os.WriteFile(broken, []byte("{\n \"env\": {\"OPENAI_API_KEY\": \"sk-SECRET7777\"\n \"permissions\": {}}\n"), 0o644))
	res := runCLI(t, env, "", "fix", "--rules", "--inventory", inv, "--project-key", "/home/demo/src/lab",
		filepath.Join(dir, "dot-claude"), filepath.Join(dir, "project-settings", "lab"))
	assert.Equal(t, exitcode.Partial, res.code, res.err)
	assert.NotContains(t, res.err, "panic")
	assert.Contains(t, res.err, broken+":3:2: not valid JSON")
	assert.Equal(t, 1, strings.Count(res.err, broken), "the path once: %s", res.err)
	assert.NotContains(t, res.out+res.err, "SECRET")
	assert.Contains(t, res.out, `dot-claude/settings.json:4:14 user permissions.deny[0]: rewrite "mcp__foo.bar__deploy.prod"`)
}

// TestPlanRecordsClaudeNamingOptions: a plan made with --mcp-config and --allow-shared records
// them (options.mcp_config, options.allow_shared) and --plan plans again with them, so the plan
// applies as made; given again with --plan they are usage errors, as every other naming flag.
// Before, the plan recorded neither: --plan re-planned without the server keys of --mcp-config
// and without --allow-shared and refused every store ("planning it again does not give the
// planned edits", exit 3).
func TestPlanRecordsClaudeNamingOptions(t *testing.T) {
	env := testEnv(t)
	dir := copyClaudeFixture(t, t.TempDir())
	cfg := filepath.Join(dir, "mcp-config.json")
	plan := filepath.Join(t.TempDir(), "plan.json")
	r := runCLI(t, env, "", "fix", "--allow-shared", "--mcp-config", cfg, "--plan-out", plan, filepath.Join(dir, "dot-claude"))
	require.Equal(t, 0, r.code, r.err)
	b, err := os.ReadFile(plan)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"allow_shared": true`)
	assert.Contains(t, string(b), `"mcp_config": [`+"\n"+`      "`+cfg+`"`)

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan, "--allow-shared")
	assert.Equal(t, exitcode.Usage, r.code, r.err)
	assert.Contains(t, r.err, "drop --allow-shared")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan)
	assert.Equal(t, 0, r.code, r.err)
	assert.NotContains(t, r.err, "does not give the planned edits")
	assert.Contains(t, r.out, "rewrote 8 names in 2 files")
}

// TestFixRefusesAStoreWhoseNameIsNotUTF8: fix --apply leaves a session whose file name is not
// valid UTF-8 as it is, names it with the reason on stderr, exit 3; the other stores are rewritten
// and undo restores them all. Before, it was rewritten and its run manifest recorded the name with
// U+FFFD: undo refused it ("it no longer exists") and undo --force would have created another file.
func TestFixRefusesAStoreWhoseNameIsNotUTF8(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	chats := filepath.Join(dir, "projects", "-home-demo-src-lab", "chats")
	ents, err := os.ReadDir(chats)
	require.NoError(t, err)
	var src string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			src = filepath.Join(chats, e.Name())
			break
		}
	}
	require.NotEmpty(t, src)
	bad := filepath.Join(chats, "bad\xffname.jsonl")
	require.NoError(t, os.Rename(src, bad))
	before := readTree(t, dir)

	r := runCLI(t, env, "", "fix", "--apply", "--yes", dir)
	assert.Equal(t, exitcode.Partial, r.code, r.err)
	assert.Contains(t, r.err, bad+": error: the store's path is not valid UTF-8: not rewritten")
	rel, _ := filepath.Rel(dir, bad)
	assert.Equal(t, before[rel], readTree(t, dir)[rel], "the store is not rewritten")
	assert.Contains(t, r.out, "rewrote 20 names in 2 files")

	u := runCLI(t, env, "", "undo", "--last", "--yes")
	require.Equal(t, exitcode.OK, u.code, u.err)
	assert.Equal(t, before, readTree(t, dir), "undo restores every store the run rewrote")
}

// TestApplyPlanStoreNotReadIsAnError: a store of the plan that discovery no longer gives as a
// store (here: the re-sealed plan's options read Claude Code sessions as Qwen Code's, which
// leaves them out with a warning) is an error naming it, not rewritten, exit 3. Before, the
// run said "nothing to change" and exited 0 although none of the plan was applied.
func TestApplyPlanStoreNotReadIsAnError(t *testing.T) {
	env := testEnv(t)
	dir := copyClaudeFixture(t, t.TempDir())
	cfg := filepath.Join(dir, "mcp-config.json")
	plan := filepath.Join(t.TempDir(), "plan.json")
	require.Equal(t, exitcode.OK, runCLI(t, env, "", "fix", "--mcp-config", cfg, "--plan-out", plan, filepath.Join(dir, "dot-claude")).code)
	pf, err := pipeline.ReadPlanFile(plan)
	require.NoError(t, err)
	require.Len(t, pf.Stores, 2)
	pf.Options.Agent = "qwen"
	b, err := rewrite.MarshalPlanFile(pf)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(plan, b, 0o600))
	before := readTree(t, dir)

	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan)
	assert.Equal(t, exitcode.Partial, r.code, r.out+r.err)
	for _, s := range pf.Stores {
		assert.Contains(t, r.err, s.Path+": error: planned, but not read as a store now")
	}
	assert.Equal(t, before, readTree(t, dir), "nothing is rewritten")
}

// TestPlanOutRefusesAStoreOfTheRun: --plan-out naming a session the run reads (a slip of tab
// completion) is a usage error before anything is written; the session keeps its bytes. Before,
// the dry run said "nothing was changed" after writing the plan over the session.
func TestPlanOutRefusesAStoreOfTheRun(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	chats := filepath.Join(dir, "projects", "-home-demo-src-lab", "chats")
	ents, err := os.ReadDir(chats)
	require.NoError(t, err)
	var session string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			session = filepath.Join(chats, e.Name())
			break
		}
	}
	require.NotEmpty(t, session)
	before := readTree(t, dir)
	r := runCLI(t, env, "", "fix", "--plan-out", session, dir)
	assert.Equal(t, exitcode.Usage, r.code, r.out+r.err)
	assert.Contains(t, r.err, "--plan-out "+session+" is a file this run reads")
	assert.Equal(t, before, readTree(t, dir), "the session keeps its bytes")
}

// TestAuditOutRefusesAFileItReads: audit --out or --tools-out naming a settings or rule file the
// audit reads is a usage error, and that file keeps its bytes. Before, the report replaced the
// user's settings.json (its permission rules gone) and the audit exited 0.
func TestAuditOutRefusesAFileItReads(t *testing.T) {
	env := testEnv(t)
	dir := claudeRulesCopy(t)
	inv, err := filepath.Abs("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	user := filepath.Join(dir, "dot-claude", "settings.json")
	orig := readFileString(t, user)
	for _, flag := range []string{"--out", "--tools-out"} {
		r := runCLI(t, env, "", "audit", "--agent", "claude", "--inventory", inv, "--project-key", "/home/demo/src/lab", "--format", "json",
			flag, user, filepath.Join(dir, "dot-claude"), filepath.Join(dir, "project-settings", "lab"))
		assert.Equal(t, exitcode.Usage, r.code, r.err)
		assert.Contains(t, r.err, "audit: "+flag+" "+user+" is a file this audit reads")
		assert.Equal(t, orig, readFileString(t, user), "the rule file keeps its bytes")
	}

	qs, err := filepath.Abs("../../fixtures/qwen-settings/settings.json")
	require.NoError(t, err)
	q := filepath.Join(t.TempDir(), "settings.json")
	b, err := os.ReadFile(qs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(q, b, 0o644))
	r := runCLI(t, env, "", "audit", "--settings", q, "--inventory", "../../fixtures/qwen-settings/inventory.json", "--out", q)
	assert.Equal(t, exitcode.Usage, r.code, r.err)
	assert.Contains(t, r.err, "audit: --out "+q+" is a file this audit reads")
	assert.Equal(t, string(b), readFileString(t, q))
}

// TestFixRulesRefusesFlagsItDoesNotHonour: fix --rules has no plan file and no --fail-on; given
// them it is a usage error and writes nothing. Before, --plan-out wrote no plan (exit 0, no word),
// --apply --yes --plan FILE migrated the rules and ignored the plan, --fail-on was ignored.
func TestFixRulesRefusesFlagsItDoesNotHonour(t *testing.T) {
	env := testEnv(t)
	dir := claudeRulesCopy(t)
	inv, err := filepath.Abs("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	orig := snapshotRules(t, dir)
	plan := filepath.Join(t.TempDir(), "plan.json")
	for _, extra := range [][]string{
		{"--plan-out", plan},
		{"--apply", "--yes", "--plan", plan},
		{"--fail-on", "kept"},
		{"--mcp-config", filepath.Join(dir, "mcp-config.json")},
	} {
		args := append([]string{"fix", "--rules", "--inventory", inv, "--project-key", "/home/demo/src/lab"}, extra...)
		r := runCLI(t, env, "", append(args, filepath.Join(dir, "dot-claude"), filepath.Join(dir, "project-settings", "lab"))...)
		assert.Equal(t, exitcode.Usage, r.code, "%v: %s", extra, r.err)
		assert.Contains(t, r.err, extra[len(extra)-2]+" does not go with --rules", extra)
		assert.Equal(t, orig, snapshotRules(t, dir), "nothing written")
		assert.NoFileExists(t, plan)
	}
}

// TestOutputsRefuseTheirInputs: fix --plan-out naming the --mcp-config or --inventory file, and
// audit --out naming the --inventory file, are usage errors; the input keeps its bytes. Before,
// the plan or the report replaced the user's MCP config or inventory, exit 0.
func TestOutputsRefuseTheirInputs(t *testing.T) {
	env := testEnv(t)
	dir := copyClaudeFixture(t, t.TempDir())
	cfg := filepath.Join(dir, "mcp-config.json")
	orig := readFileString(t, cfg)
	r := runCLI(t, env, "", "fix", "--mcp-config", cfg, "--plan-out", cfg, filepath.Join(dir, "dot-claude"))
	assert.Equal(t, exitcode.Usage, r.code, r.err)
	assert.Contains(t, r.err, "--plan-out "+cfg+" is a file this run reads")
	assert.Equal(t, orig, readFileString(t, cfg))

	inv := filepath.Join(t.TempDir(), "inventory.json")
	b, err := os.ReadFile("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(inv, b, 0o644))
	r = runCLI(t, env, "", "fix", "--inventory", inv, "--plan-out", inv, filepath.Join(dir, "dot-claude"))
	assert.Equal(t, exitcode.Usage, r.code, r.err)
	assert.Equal(t, string(b), readFileString(t, inv))
	r = runCLI(t, env, "", "audit", "--agent", "claude", "--inventory", inv, "--project-key", "/home/demo/src/lab", "--out", inv,
		filepath.Join(dir, "dot-claude"), filepath.Join(dir, "project-settings", "lab"))
	assert.Equal(t, exitcode.Usage, r.code, r.err)
	assert.Contains(t, r.err, "audit: --out "+inv+" is a file this audit reads")
	assert.Equal(t, string(b), readFileString(t, inv))
}

// TestFixRulesRewritesASymlinkedRuleFileAtItsTarget: ~/.claude/settings.json as a symbolic link
// into a dotfiles checkout: fix --rules --apply rewrites the target, the link stays a link, undo
// restores the target. Before, the rename replaced the link with a regular file (the dotfiles
// copy kept the old rules and was no longer what Claude Code read).
func TestFixRulesRewritesASymlinkedRuleFileAtItsTarget(t *testing.T) {
	env := testEnv(t)
	dir := claudeRulesCopy(t)
	inv, err := filepath.Abs("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	link := filepath.Join(dir, "dot-claude", "settings.json")
	target := filepath.Join(t.TempDir(), "dotfiles-claude-settings.json")
	require.NoError(t, os.Rename(link, target))
	require.NoError(t, os.Symlink(target, link))
	orig := readFileString(t, target)

	r := runCLI(t, env, "", "fix", "--rules", "--inventory", inv, "--project-key", "/home/demo/src/lab", "--apply", "--yes", filepath.Join(dir, "dot-claude"))
	require.Equal(t, exitcode.OK, r.code, r.err)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "the link stays a link")
	assert.Equal(t, strings.NewReplacer(`"mcp__foo.bar__deploy.prod"`, `"mcp__foo_bar__deploy_prod"`, `"mcp__lit__get+data"`, `"mcp__lit__get_data"`).Replace(orig),
		readFileString(t, target), "the target is rewritten")

	u := runCLI(t, env, "", "undo", "--last", "--yes")
	require.Equal(t, exitcode.OK, u.code, u.out+u.err)
	assert.Equal(t, orig, readFileString(t, target))
	fi, err = os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink)
}
