package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/sessionfix/sessionfix/pipeline"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/qwen"
)

// planOptions are the naming choices shared by scan and fix.
type planOptions struct {
	KeepTruncated bool
	RewriteLossy  bool
	Inventory     string
	Agent         string
	CodexConfig   string
	Discover      bool
	// Claude Code: --mcp-config files, --allow-shared; ClaudeVersion is the release whose
	// names are current ("" = the newest known; no flag sets it yet).
	MCPConfigs    []string
	AllowShared   bool
	ClaudeVersion string
	// codex keeps the Codex policy of the first pipeline, so a plan confirmed interactively is
	// applied with the same inventory (discovery runs once).
	codex *codexCache
	// SQLite stores: --profile FILE and --busy-timeout.
	Profile     string
	BusyTimeout time.Duration
	// StateDir is fix's --state-dir ("" = the default); discovery never reads it.
	StateDir string
	// RollBack: fix --apply rolls back a hot SQLite journal a crashed writer left before it
	// reads the database (scan and dry-runs only read: they report it).
	RollBack bool
}

// sameFile reports whether two paths name the same file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// stateDirOf resolves the state directory: dir, else $SESSIONFIX_STATE_DIR, else
// ${XDG_STATE_HOME:-~/.local/state}/sessionfix; always absolute, so the run manifest and the
// undo hint name it wherever they are read from.
func stateDirOf(env *Env, dir string) string {
	if dir == "" {
		dir = env.Getenv("SESSIONFIX_STATE_DIR")
	}
	if dir == "" {
		dir = rewrite.DefaultStateDir(env.Getenv, env.Home)
	}
	if a, err := filepath.Abs(dir); err == nil {
		dir = a
	}
	return dir
}

func planFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "keep-truncated", Usage: "keep middle-truncated names that contain a dot instead of normalizing them"},
		&cli.BoolFlag{Name: "rewrite-lossy", Usage: "rewrite lossy legacy names (e.g. mcp__lit__get_data for raw get+data) to their tool's registered name (needs --inventory)"},
		&cli.StringFlag{Name: "inventory", Usage: "JSON inventory of MCP tools (raw identities; see README) to recognise lossy and normalized names, and to name Codex calls as Codex does", TakesFile: true},
		&cli.StringFlag{Name: "agent", Usage: "read the stores as this agent's: qwen, codex or claude (default: detect each file by name and content; also picks the default root); a file whose content says another agent is named in a warning"},
		&cli.StringFlag{Name: "codex-config", Usage: "Codex config.toml giving MCP server keys, tool filters and naming options (default: the config.toml of the Codex home each rollout is in, else $CODEX_HOME/config.toml, else ~/.codex/config.toml, when it exists)", TakesFile: true},
		&cli.BoolFlag{Name: "discover", Usage: "start the MCP servers of the Codex config.toml and list their tools: the full inventory, so Codex names get the collision suffixes Codex computes"},
		profileFlag(),
		busyTimeoutFlag(),
	}, claudeFlags()...)
}

func readPlanFlags(c *cli.Context) planOptions {
	return planOptions{KeepTruncated: c.Bool("keep-truncated"), RewriteLossy: c.Bool("rewrite-lossy"), Inventory: c.String("inventory"),
		Agent: c.String("agent"), CodexConfig: c.String("codex-config"), Discover: c.Bool("discover"), codex: &codexCache{},
		MCPConfigs: repeated(c, "mcp-config"), AllowShared: c.Bool("allow-shared"),
		Profile: c.String("profile"), BusyTimeout: c.Duration("busy-timeout")}
}

// validate refuses contradictory or invalid naming flags. Commands call it before any side
// effect (removing leftovers, starting MCP servers for --discover, reading stores); newPipeline
// calls it again for callers that did not.
func (po planOptions) validate() error {
	if po.RewriteLossy && po.Inventory == "" {
		return usageErrorf("--rewrite-lossy needs --inventory (a lossy name can only be attributed with the raw tool list)")
	}
	if err := checkAgent(po.Agent); err != nil {
		return err
	}
	if po.BusyTimeout < 0 {
		return usageErrorf("--busy-timeout must not be negative")
	}
	return nil
}

// pipelineRun is discover → (scan → plan → apply) per store, with a streaming aggregate.
type pipelineRun struct {
	env   *Env
	roots []string
	found *scan.Found
	pol   rewrite.Policy
	agg   *aggregate
	// settings holds the settings files among the roots and their legacy-spelled rules
	// (reported only; settings are never rewritten).
	settings *pipeline.SettingsScan
}

// newPipeline resolves the roots (default: see defaultRoots), loads the
// inventory, discovers the stores and, when some are Codex rollouts, loads the Codex policy.
func newPipeline(ctx context.Context, env *Env, paths []string, po planOptions) (*pipelineRun, error) {
	if err := po.validate(); err != nil {
		return nil, err
	}
	var inv *inventory.Inventory // read once: the index here, the Codex tools in codexPolicy
	var ix *mcpname.Index
	if po.Inventory != "" {
		var err error
		if inv, err = inventory.Load(po.Inventory); err != nil {
			return nil, err
		}
		ix = inv.Index()
	}
	roots := paths
	if len(roots) == 0 {
		roots = defaultRoots(env, po.Agent)
	}
	settingsFiles, storeRoots, walked := pipeline.SplitSettingsRoots(roots)
	sopt, err := storeOptions(po.Profile, po.BusyTimeout)
	if err != nil {
		return nil, err
	}
	sopt.Agent = store.AgentID(po.Agent)
	sopt.SQLite.RollBack = po.RollBack
	found, err := scan.DiscoverWith(ctx, storeRoots, scan.DiscoverOptions{Backend: sopt, Exclude: []string{stateDirOf(env, po.StateDir)}})
	if err != nil {
		return nil, err
	}
	found.Ignored = max(0, found.Ignored-walked) // read by the settings pass
	found.IgnoredPaths = slices.DeleteFunc(found.IgnoredPaths, func(p string) bool {
		return slices.ContainsFunc(settingsFiles, func(f string) bool { return sameFile(f, p) })
	})
	rootProbs, err := checkRoots(env, po.Agent, len(paths) == 0, found, settingsFiles)
	if err != nil {
		return nil, err
	}
	cx, err := codexPolicy(ctx, env, po, found, sopt, inv)
	if err != nil {
		return nil, err
	}
	cl, err := claudePolicy(ctx, env, po, found)
	if err != nil {
		return nil, err
	}
	leftOut := 0
	if len(cx.skip) > 0 { // rollouts of a home whose config.toml could not be read
		skip := make(map[string]bool, len(cx.skip))
		for _, p := range cx.skip {
			skip[p] = true
		}
		n := len(found.Targets)
		found.Targets = slices.DeleteFunc(found.Targets, func(t scan.Target) bool { return skip[t.Store.Ref().Path] })
		leftOut = n - len(found.Targets)
	}
	p := &pipelineRun{env: env, roots: roots, found: found,
		pol: rewrite.Policy{KeepTruncated: po.KeepTruncated, RewriteLossy: po.RewriteLossy, Index: ix, Codex: cx.pol, CodexByPath: cx.byPath,
			Claude: cl.pol, ClaudeByPath: cl.byPath},
		settings: pipeline.ScanSettings(settingsFiles, env.settingsEnv(), env.Home, ix)}
	p.agg = pipeline.NewSummary(p.found)
	p.agg.LeftOut = leftOut // named in the closing line: "N stores left out (see errors)"
	p.agg.Report.Problems = append(p.agg.Report.Problems, rootProbs...)
	p.agg.Report.Problems = append(p.agg.Report.Problems, cx.problems...)
	if slices.ContainsFunc(cx.problems, func(pr problemRow) bool { return pr.Severity == string(store.SevError) }) {
		p.agg.Failed = true
	}
	p.agg.Report.Codex = cx.info
	p.agg.Report.Claude = cl.info
	p.agg.Report.Problems = append(p.agg.Report.Problems, cl.problems...)
	if slices.ContainsFunc(cl.problems, func(pr problemRow) bool { return pr.Severity == string(store.SevError) }) {
		p.agg.Failed = true
	}
	p.agg.Report.Problems = append(p.agg.Report.Problems, p.settings.Errors...)
	p.agg.Report.SettingsRules = p.settings.Rows()
	if len(p.settings.Errors) > 0 {
		p.agg.Failed = true
	}
	return p, nil
}

// checkRoots turns what discovery made of the roots into an error or problems (issue 8 item 6):
// when not one root could be read and no settings file was given, the run is an error (exit 1)
// naming each path (for the default root, which variables and paths were tried) instead of
// an empty report; a directory that holds no store (and no settings file) is a warning "no
// store found under DIR". A root that is missing while others were read stays a problem
// (discovery's error Issue: exit 3).
func checkRoots(env *Env, id string, isDefault bool, found *scan.Found, settingsFiles []string) ([]problemRow, error) {
	var missing []string
	var probs []problemRow
	for _, r := range found.Roots {
		switch {
		case r.Err != nil:
			missing = append(missing, fmt.Sprintf("%s: %s", r.Path, errReason(r.Err)))
		case r.Dir && r.Stores == 0 && !slices.ContainsFunc(settingsFiles, func(f string) bool { return underRoot(f, r.Path) }):
			probs = append(probs, problemRow{Path: r.Abs, Severity: string(store.SevWarning), Reason: "no store found under " + r.Path})
		}
	}
	if len(missing) == 0 || len(missing) < len(found.Roots) || len(settingsFiles) > 0 {
		return probs, nil
	}
	if !isDefault {
		return nil, fmt.Errorf("nothing could be read: %s", strings.Join(missing, "; "))
	}
	a := all.Lookup(store.AgentID(id))
	if a == nil || a.RootsTried == nil {
		a = all.Lookup(qwen.ID) // the default roots
	}
	what, tried, hint := a.RootsTried(agent.Env{Getenv: env.Getenv, Home: env.Home})
	return nil, fmt.Errorf("no %s found: tried %s: %s (pass a PATH, or %s)", what, tried, strings.Join(missing, "; "), hint)
}

// errReason is an error without its path ("no such file or directory").
func errReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// underRoot reports whether path is root or lies under it.
func underRoot(path, root string) bool {
	a, err1 := filepath.Abs(path)
	b, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, string(filepath.Separator))+string(filepath.Separator))
}

// run processes every store, calling each (after aggregation) for each result in path order.
func (p *pipelineRun) run(ctx context.Context, opt rewrite.ProcessOptions, each func(*rewrite.StoreResult) error) (*rewrite.Result, error) {
	stores := make([]store.Store, len(p.found.Targets))
	for i, t := range p.found.Targets {
		stores[i] = t.Store
	}
	bar := newProgress(p.env, opt.Apply, len(stores), p.found.TotalSize())
	if bar != nil {
		opt.Progress = bar.addBytes
	}
	res, err := rewrite.Process(ctx, stores, p.pol, opt, func(r *rewrite.StoreResult) error {
		p.agg.Add(r)
		if bar != nil {
			bar.storeDone()
		}
		if each != nil {
			return each(r)
		}
		return nil
	})
	if bar != nil {
		bar.finish()
	}
	p.agg.Finish()
	return res, err
}

func identityTable(rep *scanReport) *reports.Table {
	t := &reports.Table{Columns: []string{"server", "raw tool", "records", "stores"}}
	for _, r := range rep.Identities {
		t.Add(r.Server, r.Tool, fmt.Sprint(r.Count), fmt.Sprint(r.Stores))
	}
	return t
}

// checkFailOn validates --fail-on of scan and fix: "kept" is the only finding.
func checkFailOn(val string) (bool, error) {
	kept := false
	if val != "" {
		for _, f := range strings.Split(val, ",") {
			switch strings.TrimSpace(f) {
			case "kept":
				kept = true
			case "":
			default:
				return false, usageErrorf("--fail-on takes kept, not %q", f)
			}
		}
	}
	return kept, nil
}

// failOnFlag is --fail-on of scan and fix.
func failOnFlag() cli.Flag {
	return &cli.StringFlag{Name: "fail-on", Usage: "kept: exit 5 when a name a provider rejects is kept (for scheduled jobs)"}
}

// keptFinding prints the --fail-on kept finding on standard error and returns its exit error
// (nil when --fail-on kept is off or nothing was kept).
// endCode is the exit of a run that read every store (scan, fix's dry run and its plan before
// the prompt): a store in use, 4, wins over one that could not be read, 3, which wins over a
// --fail-on kept finding, 5.
func endCode(a *aggregate, env *Env, cmd string, failOnKept bool) error {
	switch {
	case a.InUse > 0:
		return withCode(exitInUse)
	case a.Failed:
		return withCode(exitPartial)
	}
	return keptFinding(a, env, cmd, failOnKept)
}

func keptFinding(a *aggregate, env *Env, cmd string, failOnKept bool) error {
	if !failOnKept || a.Report.Totals.KeptRejected == 0 {
		return nil
	}
	fmt.Fprintf(env.Err, "%s: --fail-on kept: %s a provider rejects kept\n", cmd, plural(a.Report.Totals.KeptRejected, "name"))
	return withCode(exitFinding)
}

// classTable counts names per class; labels splits legacy-dotted by reason (classLabel).
func classTable(rep *scanReport, labels map[string]int) *reports.Table {
	t := &reports.Table{Columns: []string{"class", "names", "fix action"}}
	for _, c := range append(append(slices.Clone(mcpname.Classes), rewrite.CodexClasses...), rewrite.ClaudeClasses...) {
		n := rep.Classes[c]
		if n == 0 {
			continue
		}
		if c == mcpname.ClassLegacyDotted && len(labels) > 0 {
			for _, l := range slices.Sorted(maps.Keys(labels)) {
				t.Add(l, fmt.Sprint(labels[l]), classAction(c))
			}
			continue
		}
		t.Add(string(c), fmt.Sprint(n), classAction(c))
	}
	return t
}

func classAction(c mcpname.Class) string {
	switch c {
	case mcpname.ClassLegacyDotted:
		return "rewrite to normalizeMcp(name)"
	case mcpname.ClassLegacyTruncated:
		return "keep (middle cannot be rebuilt)"
	case mcpname.ClassLegacyTruncatedDotted:
		return "rewrite to normalizeMcp(name); keep with --keep-truncated"
	case mcpname.ClassLossyLegacy:
		return "keep; rewrite with --rewrite-lossy"
	case rewrite.ClassCodexRejected:
		return "rewrite to the current Codex name (namespace + name) of its raw identity"
	case rewrite.ClassCodexUnattributed:
		return "keep (raw identity unknown; pass --inventory or --codex-config)"
	case rewrite.ClassClaudeRenamed:
		return "rewrite to the current Claude Code name of its raw identity"
	case rewrite.ClassClaudeShared:
		return "report (two raw tools share the current name); rewrite with --allow-shared"
	case rewrite.ClassClaudeUnattributed:
		return "keep (raw identity unknown; pass --mcp-config or --inventory)"
	case rewrite.ClassClaudeOverLong:
		return "keep (the name Claude Code registers; providers with a 64 limit reject it)"
	default:
		return "none"
	}
}

func storeTable(stores []storeRow) *reports.Table {
	t := &reports.Table{Columns: []string{"store", "kind", "records", "sites", "rewrite", "kept", "problems"}}
	for _, s := range stores {
		if s.Error != "" {
			what := "unreadable"
			if s.InUse {
				what = "in use"
			}
			t.Add(s.Path, pipeline.KindLabel(s.Kind, s.Profile), "-", "-", "-", "-", what)
			continue
		}
		t.Add(s.Path, pipeline.KindLabel(s.Kind, s.Profile), fmt.Sprint(s.Records), fmt.Sprint(s.Sites), fmt.Sprint(s.Rewrite), fmt.Sprint(s.Kept), fmt.Sprint(s.Problems))
	}
	return t
}

// renameTable lists old → new with counts, then the kept names, at most limit rows of
// renames (0 = all).
func renameTable(renames, kept []renameRow, limit int) *reports.Table {
	t := &reports.Table{Columns: []string{"old", "new", "class", "count"}}
	for i, r := range renames {
		if limit > 0 && i == limit {
			break
		}
		t.Add(r.Old.String(), r.New, pipeline.ReasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count))
	}
	for _, r := range kept {
		t.Add(r.Old.String(), "(kept)", pipeline.ReasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count))
	}
	return t
}

// writeCodexInfo prints which Codex config and inventory the plan used (nothing when the run
// found no Codex rollout).
func writeCodexInfo(w io.Writer, rep *scanReport) {
	if len(rep.Codex)+len(rep.Claude) > 0 {
		fmt.Fprintln(w)
	}
	for _, ci := range rep.Claude {
		fmt.Fprintln(w, reports.Printable(ci.Text()))
	}
	for _, ci := range rep.Codex {
		fmt.Fprintln(w, reports.Printable(ci.Text(len(rep.Codex) > 1)))
	}
}

// writeProblems prints the problems and warnings of a run on standard error (issue 8 item 7:
// the report on standard output stays machine-clean, also with --format json, which carries
// them as members too). Standard output is flushed first, so on a terminal they appear after
// the tables printed so far.
func writeProblems(env *Env, probs []problemRow) {
	if len(probs) == 0 {
		return
	}
	flushOut(env)
	w := env.Err
	fmt.Fprintf(w, "%s:\n", plural(len(probs), "problem"))
	for _, p := range probs {
		fmt.Fprintf(w, "  %s\n", reports.Printable(p.String()))
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// workersFlag is --workers of scan and fix; the help shows the one real default.
func workersFlag() cli.Flag {
	return &cli.IntFlag{Name: "workers", Usage: "parallel readers", DefaultText: "the number of CPUs, at most 8"}
}

// summaryStores is how many stores scan and fix list one by one: above it, text output is a
// summary (per agent and store kind, the largest stores, old → new counts) and -v or
// --format json gives every store (issue 8: 5,000 sessions printed 115,002 plan lines).
const summaryStores = 20

// summaryRows caps each name table of the summary (old → new, kept); the JSON has them all.
const summaryRows = 50

// agentOf is the agent a store belongs to, from its kind label: the part before the first
// "-" ("<agent>-<format>" for file kinds; the profile name for databases).
func agentOf(label string) string {
	a, _, _ := strings.Cut(label, "-")
	return a
}

// kindTable sums the stores per agent and store kind.
func kindTable(rep *scanReport) *reports.Table {
	type sum struct {
		stores, sites, rewrite, kept, problems, unreadable int
		records, bytes                                     int64
	}
	sums := map[[2]string]*sum{}
	for _, s := range rep.Stores {
		l := pipeline.KindLabel(s.Kind, s.Profile)
		k := [2]string{agentOf(l), l}
		if sums[k] == nil {
			sums[k] = &sum{}
		}
		m := sums[k]
		m.stores++
		if s.Error != "" {
			m.unreadable++
			continue
		}
		m.sites += s.Sites
		m.rewrite += s.Rewrite
		m.kept += s.Kept
		m.problems += s.Problems
		m.records += s.Records
		m.bytes += s.Bytes
	}
	keys := slices.SortedFunc(maps.Keys(sums), func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	t := &reports.Table{Columns: []string{"agent", "kind", "stores", "size", "records", "sites", "rewrite", "kept", "problems"}}
	for _, k := range keys {
		m := sums[k]
		probs := fmt.Sprint(m.problems)
		if m.unreadable > 0 {
			probs += fmt.Sprintf(" (+%d unreadable)", m.unreadable)
		}
		t.Add(k[0], k[1], fmt.Sprint(m.stores), humanBytes(m.bytes), fmt.Sprint(m.records), fmt.Sprint(m.sites),
			fmt.Sprint(m.rewrite), fmt.Sprint(m.kept), probs)
	}
	return t
}

// largestStores returns the n largest stores by size (ties by path), unreadable ones last.
func largestStores(rows []storeRow, n int) []storeRow {
	out := slices.Clone(rows)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Path < out[j].Path
	})
	return out[:min(n, len(out))]
}

// keptTable lists the kept names with why each is kept (the plan's note, else the class's
// rule), at most limit rows (0 = all).
func keptTable(kept []renameRow, limit int) *reports.Table {
	t := &reports.Table{Columns: []string{"kept name", "class", "count", "why"}}
	for i, r := range kept {
		if limit > 0 && i == limit {
			break
		}
		why := r.Note
		if why == "" {
			why = classAction(mcpname.Class(r.Class))
		}
		t.Add(r.Old.String(), pipeline.ReasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count), why)
	}
	return t
}

// writeSummary prints the bounded summary of a large run: stores per agent and kind, the
// summaryStores largest stores, and old → new counts and kept names (each table at most
// summaryRows rows; "-v" or --format json lists everything). how names the flag that lists
// every store ("-v").
func writeSummary(w io.Writer, rep *scanReport, how string) error {
	fmt.Fprintln(w, "stores by agent and kind:")
	if err := reports.WriteText(w, kindTable(rep)); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nthe %d largest of %s (%s or --format json lists every store):\n", min(summaryStores, len(rep.Stores)), plural(len(rep.Stores), "store"), how)
	if err := reports.WriteText(w, storeTable(largestStores(rep.Stores, summaryStores))); err != nil {
		return err
	}
	if len(rep.Renames) > 0 {
		fmt.Fprintln(w, "\nold → new (names, over all stores):")
		if err := reports.WriteText(w, renameTable(rep.Renames, nil, summaryRows)); err != nil {
			return err
		}
		if n := len(rep.Renames) - summaryRows; n > 0 {
			fmt.Fprintf(w, "… and %s more (--format json lists them)\n", plural(n, "distinct name"))
		}
	}
	if len(rep.Kept) > 0 {
		fmt.Fprintln(w, "\nkept names, and why:")
		if err := reports.WriteText(w, keptTable(rep.Kept, summaryRows)); err != nil {
			return err
		}
		if n := len(rep.Kept) - summaryRows; n > 0 {
			fmt.Fprintf(w, "… and %s more (--format json lists them)\n", plural(n, "distinct name"))
		}
	}
	return nil
}

// reportUnreached makes each store of the applied plan that discovery did not give as a store
// now (rewrite.Unreached) an error of the run (exit 3), unless discovery already named it in an
// error (a path that is gone).
func (p *pipelineRun) reportUnreached(planned map[string]*rewrite.PlannedStore) {
	paths := make([]string, 0, len(p.found.Targets))
	for _, t := range p.found.Targets {
		paths = append(paths, t.Store.Ref().Path)
	}
	for _, path := range rewrite.Unreached(planned, paths) {
		if slices.ContainsFunc(p.found.Issues, func(is scan.Issue) bool { return is.Path == path && is.Severity == store.SevError }) {
			continue
		}
		p.agg.Report.Problems = append(p.agg.Report.Problems, pipeline.NewProblem(path, store.Loc{}, string(store.SevError),
			"planned, but not read as a store now (gone, or left out with a warning above): not rewritten; make a new plan"))
		p.agg.Failed = true
	}
}

// reads reports whether path is one of the run's stores or settings files, or an input of po
// (--inventory, --codex-config, --profile, --mcp-config): the same file.
func (p *pipelineRun) reads(path string, po planOptions) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	same := func(q string) bool {
		fq, err := os.Stat(q)
		return err == nil && os.SameFile(fi, fq)
	}
	inputs := append([]string{po.Inventory, po.CodexConfig, po.Profile}, po.MCPConfigs...)
	return slices.ContainsFunc(p.found.Targets, func(t scan.Target) bool { return same(t.Store.Ref().Path) }) ||
		slices.ContainsFunc(p.settings.Files, same) || slices.ContainsFunc(inputs, func(q string) bool { return q != "" && same(q) })
}
