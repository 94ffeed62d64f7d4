package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/sqlite"
)

// planOptions are the naming choices shared by scan and fix.
type planOptions struct {
	KeepTruncated bool
	RewriteLossy  bool
	Inventory     string
	Agent         string
	CodexConfig   string
	Discover      bool
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
	return []cli.Flag{
		&cli.BoolFlag{Name: "keep-truncated", Usage: "keep middle-truncated names that contain a dot instead of normalizing them"},
		&cli.BoolFlag{Name: "rewrite-lossy", Usage: "rewrite lossy legacy names (e.g. mcp__lit__get_data for raw get+data) to their tool's registered name (needs --inventory)"},
		&cli.StringFlag{Name: "inventory", Usage: "JSON inventory of MCP tools (raw identities; see README) to recognise lossy and normalized names, and to name Codex calls as Codex does", TakesFile: true},
		&cli.StringFlag{Name: "agent", Usage: "read the stores as this agent's: qwen or codex (default: detect each file by name and content; also picks the default root); a file whose content says another agent is named in a warning"},
		&cli.StringFlag{Name: "codex-config", Usage: "Codex config.toml giving MCP server keys, tool filters and naming options (default: the config.toml of the Codex home each rollout is in, else $CODEX_HOME/config.toml, else ~/.codex/config.toml, when it exists)", TakesFile: true},
		&cli.BoolFlag{Name: "discover", Usage: "start the MCP servers of the Codex config.toml and list their tools: the full inventory, so Codex names get the collision suffixes Codex computes"},
		profileFlag(),
		busyTimeoutFlag(),
	}
}

func readPlanFlags(c *cli.Context) planOptions {
	return planOptions{KeepTruncated: c.Bool("keep-truncated"), RewriteLossy: c.Bool("rewrite-lossy"), Inventory: c.String("inventory"),
		Agent: c.String("agent"), CodexConfig: c.String("codex-config"), Discover: c.Bool("discover"), codex: &codexCache{},
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

// pipeline is discover → (scan → plan → apply) per store, with a streaming aggregate.
type pipeline struct {
	env   *Env
	roots []string
	found *scan.Found
	pol   rewrite.Policy
	agg   *aggregate
	// settings holds the settings files among the roots and their legacy-spelled rules
	// (reported only; settings are never rewritten).
	settings *settingsScan
}

// newPipeline resolves the roots (default: see defaultRoots), loads the
// inventory, discovers the stores and, when some are Codex rollouts, loads the Codex policy.
func newPipeline(ctx context.Context, env *Env, paths []string, po planOptions) (*pipeline, error) {
	if err := po.validate(); err != nil {
		return nil, err
	}
	ix, err := loadInventoryIndex(po.Inventory)
	if err != nil {
		return nil, err
	}
	roots := paths
	if len(roots) == 0 {
		roots = defaultRoots(env, po.Agent)
	}
	settingsFiles, storeRoots, walked := splitSettingsRoots(roots)
	sopt, err := storeOptions(po.Profile, po.BusyTimeout)
	if err != nil {
		return nil, err
	}
	sopt.Agent = po.Agent
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
	cx, err := codexPolicy(ctx, env, po, found, sopt)
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
	p := &pipeline{env: env, roots: roots, found: found,
		pol:      rewrite.Policy{KeepTruncated: po.KeepTruncated, RewriteLossy: po.RewriteLossy, Index: ix, Codex: cx.pol, CodexByPath: cx.byPath},
		settings: scanSettings(settingsFiles, env.settingsEnv(), env.Home, ix)}
	p.agg = newAggregate(p.found)
	p.agg.leftOut = leftOut // named in the closing line: "N stores left out (see errors)"
	p.agg.rep.Problems = append(p.agg.rep.Problems, rootProbs...)
	p.agg.rep.Problems = append(p.agg.rep.Problems, cx.problems...)
	if slices.ContainsFunc(cx.problems, func(pr problemRow) bool { return pr.Severity == string(store.SevError) }) {
		p.agg.failed = true
	}
	p.agg.rep.Codex = cx.info
	p.agg.rep.Problems = append(p.agg.rep.Problems, p.settings.Errors...)
	p.agg.rep.SettingsRules = p.settings.rows()
	if len(p.settings.Errors) > 0 {
		p.agg.failed = true
	}
	return p, nil
}

// checkRoots turns what discovery made of the roots into an error or problems (issue 8 item 6):
// when not one root could be read and no settings file was given, the run is an error (exit 1)
// naming each path (for the default root, which variables and paths were tried) instead of
// an empty report; a directory that holds no store (and no settings file) is a warning "no
// store found under DIR". A root that is missing while others were read stays a problem
// (discovery's error Issue: exit 3).
func checkRoots(env *Env, agent string, isDefault bool, found *scan.Found, settingsFiles []string) ([]problemRow, error) {
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
	senv := scan.Env{Getenv: env.Getenv, Home: env.Home}
	if agent == all.AgentCodex {
		tried := "$CODEX_HOME (not set), so ~/.codex"
		if v := env.Getenv("CODEX_HOME"); v != "" {
			tried = "$CODEX_HOME=" + v
		}
		return nil, fmt.Errorf("no Codex home with sessions found: tried %s: %s (pass a PATH, or set CODEX_HOME)",
			tried, strings.Join(missing, "; "))
	}
	return nil, fmt.Errorf("no Qwen Code runtime directory found: tried %s: %s (pass a PATH, or set QWEN_HOME or QWEN_RUNTIME_DIR)",
		strings.Join(scan.DefaultQwenRootTried(senv), ", "), strings.Join(missing, "; "))
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
func (p *pipeline) run(ctx context.Context, opt rewrite.ProcessOptions, each func(*rewrite.StoreResult) error) (*rewrite.Result, error) {
	stores := make([]store.Store, len(p.found.Targets))
	for i, t := range p.found.Targets {
		stores[i] = t.Store
	}
	bar := newProgress(p.env, opt.Apply, len(stores), p.found.TotalSize())
	if bar != nil {
		opt.Progress = bar.addBytes
	}
	res, err := rewrite.Process(ctx, stores, p.pol, opt, func(r *rewrite.StoreResult) error {
		p.agg.add(r)
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
	p.agg.finish()
	return res, err
}

// aggregate is the run-wide summary built store by store (memory: one row per store and one
// entry per distinct name, never per site).
type aggregate struct {
	rep       scanReport
	renames   map[[3]string]*renameRow
	kept      map[[3]string]*renameRow
	hashClean map[string]int // clean names with a hash suffix → count (maybe normalized)
	ids       map[mcpname.CodexTool]*identityRow
	// keptRejected counts, per class, the kept names a provider rejects.
	keptRejected map[mcpname.Class]int
	dotted       map[string]bool
	failed       bool
	inUse        int
	applyErrs    int
	// leftOut counts the stores that could not be read (their ScanErr) or were left out of the
	// plan (the rollouts of a Codex home whose config.toml could not be read), leftOutInUse
	// those in use: not counted in Totals.Stores, so the closing line names them.
	leftOut, leftOutInUse int
	// rewriteDBs counts the stores to rewrite that are databases ("in 2 files and 1 database").
	rewriteDBs int
	// dottedLabels counts the legacy-dotted sites by classLabel ("legacy-non-ascii", …).
	dottedLabels map[string]int
}

func newAggregate(found *scan.Found) *aggregate {
	a := &aggregate{renames: map[[3]string]*renameRow{}, kept: map[[3]string]*renameRow{},
		hashClean: map[string]int{}, dotted: map[string]bool{}, ids: map[mcpname.CodexTool]*identityRow{}, dottedLabels: map[string]int{},
		keptRejected: map[mcpname.Class]int{}}
	a.rep.Ignored = found.Ignored
	a.rep.IgnoredPaths = found.IgnoredPaths
	if a.rep.IgnoredPaths == nil {
		a.rep.IgnoredPaths = []string{}
	}
	a.rep.Totals.ByClass = map[mcpname.Class]int{}
	for _, is := range found.Issues {
		a.rep.Problems = append(a.rep.Problems, newProblem(is.Path, store.Loc{}, string(is.Severity), is.Reason))
		if is.Severity == store.SevError {
			a.failed = true
		}
	}
	return a
}

func (a *aggregate) add(r *rewrite.StoreResult) {
	ref := r.Store.Ref()
	row := storeRow{Path: ref.Path, Kind: string(ref.Kind), Profile: profileOf(r.Store)}
	// A store planned batch by batch gives several results (rewrite.Batch): the first makes
	// its row, the others add to it.
	cont := r.Batch != nil && r.Batch.Index > 0 && len(a.rep.Stores) > 0
	appendRow := func(row storeRow) {
		if !cont {
			a.rep.Stores = append(a.rep.Stores, row)
			return
		}
		last := &a.rep.Stores[len(a.rep.Stores)-1]
		last.Bytes += row.Bytes
		last.Records += row.Records
		last.Sites += row.Sites
		last.Rewrite += row.Rewrite
		last.Kept += row.Kept
		last.Problems += row.Problems
		if row.Error != "" {
			last.Error, last.InUse = row.Error, row.InUse
		}
	}
	if r.ScanErr != nil {
		row.Error, row.InUse = r.ScanErr.Error(), errors.Is(r.ScanErr, store.ErrInUse)
		appendRow(row)
		a.rep.Problems = append(a.rep.Problems, newProblem(ref.Path, store.Loc{}, string(store.SevError), r.ScanErr.Error()))
		if row.InUse {
			a.inUse++ // locked past --busy-timeout: exit 4, not "cannot be read"
			a.leftOutInUse++
		} else {
			a.failed = true
		}
		a.leftOut++
		return
	}
	sp := r.Plan
	snap := sp.Snap
	a.rep.Bytes += snap.State.Size
	a.rep.Records += snap.Records
	row.Records, row.Problems, row.Bytes = snap.Records, len(snap.Problems)+len(sp.Warnings), snap.State.Size
	row.Sites, row.Rewrite, row.Kept = len(sp.Names()), sp.Count(rewrite.ActRewrite), sp.Count(rewrite.ActKeep)
	if snap.Failed() {
		a.failed = true
	}
	for _, pr := range snap.Problems {
		a.rep.Problems = append(a.rep.Problems, newProblem(ref.Path, pr.Loc, string(pr.Severity), pr.Reason))
	}
	for _, w := range sp.Warnings {
		a.rep.Problems = append(a.rep.Problems, newProblem(ref.Path, w.Loc, string(w.Severity), w.Reason))
	}
	counted := map[mcpname.CodexTool]bool{}
	for _, id := range snap.Identities {
		k := mcpname.CodexTool{Server: id.Server, Tool: id.Tool}
		r := a.ids[k]
		if r == nil {
			r = &identityRow{Server: id.Server, Tool: id.Tool}
			a.ids[k] = r
		}
		r.Count++
		if !counted[k] {
			counted[k] = true
			r.Stores++
		}
	}
	t := &a.rep.Totals
	rewrote := cont && a.rep.Stores[len(a.rep.Stores)-1].Rewrite > 0 // an earlier part counted the store
	if !cont {
		t.Stores++
	}
	t.Rewrite += row.Rewrite
	if row.Rewrite > 0 && !rewrote {
		t.RewriteStores++
		if ref.Kind == store.KindSQLite {
			a.rewriteDBs++
		}
	}
	also := groupedRewrites(sp)
	for _, d := range sp.Names() {
		t.Sites++
		t.ByClass[d.Class]++
		if d.Class == mcpname.ClassLegacyDotted {
			a.dottedLabels[classLabel(d.Class, d.Site)]++
		}
		var m map[[3]string]*renameRow
		switch d.Action {
		case rewrite.ActRewrite:
			m = a.renames
			if d.Class == mcpname.ClassLegacyDotted {
				a.dotted[d.Site.Name] = true
			}
		case rewrite.ActKeep:
			m = a.kept
			t.Kept++
			if d.Class == mcpname.ClassLegacyTruncated || d.Class == mcpname.ClassLegacyTruncatedDotted {
				t.KeptTruncated++
			}
			if d.KeepsRejected() {
				t.KeptRejected++
				a.keptRejected[d.Class]++
			}
		default:
			if d.Class == mcpname.ClassClean && mcpname.HasHashSuffix(d.Site.Name) {
				a.hashClean[d.Site.Name]++
			}
			continue
		}
		newName := d.New + also[d.Site.Group]
		old := siteName(d.Site)
		k := [3]string{old.text, newName, d.Note}
		if m[k] == nil {
			m[k] = &renameRow{Old: old, New: newName, Class: string(d.Class), Reasons: rejectReasons(d.Class, d.Site), Note: d.Note}
		}
		m[k].Count++
	}
	if o := r.Outcome; o != nil && o.Err != nil {
		if o.InUse() {
			a.inUse++
		} else {
			a.applyErrs++
		}
	}
	appendRow(row)
}

// finish completes the aggregate: a clean name with a hash suffix that is the normalized form
// of a dotted name seen anywhere in the run counts as "normalized".
func (a *aggregate) finish() {
	norm := map[string]bool{}
	for d := range a.dotted {
		norm[mcpname.Normalize(d)] = true
	}
	for name, n := range a.hashClean {
		if norm[name] {
			a.rep.Totals.ByClass[mcpname.ClassClean] -= n
			a.rep.Totals.ByClass[mcpname.ClassNormalized] += n
		}
	}
	if a.rep.Totals.ByClass[mcpname.ClassClean] == 0 {
		delete(a.rep.Totals.ByClass, mcpname.ClassClean)
	}
	a.rep.Classes = a.rep.Totals.ByClass
	a.rep.Renames, a.rep.Kept = sortedRows(a.renames), sortedRows(a.kept)
	a.rep.Identities = make([]identityRow, 0, len(a.ids))
	for _, r := range a.ids {
		a.rep.Identities = append(a.rep.Identities, *r)
	}
	sort.Slice(a.rep.Identities, func(i, j int) bool {
		x, y := a.rep.Identities[i], a.rep.Identities[j]
		if x.Server != y.Server {
			return x.Server < y.Server
		}
		return x.Tool < y.Tool
	})
	if a.rep.Problems == nil {
		a.rep.Problems = []problemRow{}
	}
	if a.rep.SettingsRules == nil {
		a.rep.SettingsRules = []settingsRuleRow{}
	}
	if a.rep.Stores == nil {
		a.rep.Stores = []storeRow{}
	}
}

// problemRow is one problem in a report. Where is the location as text (kept for
// compatibility); Line (1-based line of a line-oriented store) or Row (the table row of a
// database, "part id=prt_01…") give it as a field of its own.
type problemRow struct {
	Path     string `json:"path"`
	Where    string `json:"where,omitempty"`
	Line     int64  `json:"line,omitempty"`
	Row      string `json:"row,omitempty"`
	Severity string `json:"severity"`
	Reason   string `json:"reason"`
}

// newProblem is a problemRow at loc; a reason that starts with the path itself (an error
// that names its file) loses that prefix, so the printed line names the path once.
func newProblem(path string, loc store.Loc, severity, reason string) problemRow {
	return problemRow{Path: path, Where: whereOf(loc), Line: loc.Line, Row: loc.Row, Severity: severity, Reason: trimPathPrefix(path, reason)}
}

// trimPathPrefix drops the problem's own path from its reason: a leading "PATH: " and a
// wrapped os error's "open PATH: " (also stat, lstat, read) anywhere in it, so the printed
// line names the path once ("b.db: error: SQLite database that cannot be read: file is not a
// database").
func trimPathPrefix(path, reason string) string {
	if path == "" {
		return reason
	}
	reason = strings.TrimPrefix(reason, path+": ")
	for _, op := range []string{"open ", "stat ", "lstat ", "read "} {
		reason = strings.ReplaceAll(reason, op+path+": ", "")
	}
	return reason
}

// pathLoc matches a reason that starts with its own path and a position: "PATH:2:1: rest"
// (settings parse errors, file:line:col) — group 1 the position, group 2 the rest.
var pathLoc = regexp.MustCompile(`^:(\d+(?::\d+)?): (.*)$`)

// String is the problem's line: "PATH[:WHERE]: SEVERITY: REASON", the path named once (a
// reason "PATH:2:1: …" becomes "PATH:2:1: error: …").
func (p problemRow) String() string {
	loc, reason := p.Path, p.Reason
	if p.Where != "" {
		loc += ":" + p.Where
	} else if p.Path != "" && strings.HasPrefix(reason, p.Path+":") {
		if m := pathLoc.FindStringSubmatch(reason[len(p.Path):]); m != nil {
			loc, reason = p.Path+":"+m[1], m[2]
		}
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Severity, trimPathPrefix(p.Path, reason))
}

func whereOf(l store.Loc) string {
	if l.Row == "" && l.Line == 0 {
		return ""
	}
	return l.String()
}

// scanReport is the machine-readable scan result (scan --format json).
type scanReport struct {
	Roots   []string `json:"roots"`
	Elapsed string   `json:"elapsed"`
	Bytes   int64    `json:"bytes"`
	Records int64    `json:"records"`
	Ignored int      `json:"ignored_files"`
	// IgnoredPaths names them (the first 1000): nothing is skipped silently.
	IgnoredPaths []string              `json:"ignored_paths"`
	Totals       rewrite.Totals        `json:"totals"`
	Classes      map[mcpname.Class]int `json:"classes"`
	Stores       []storeRow            `json:"stores"`
	Renames      []renameRow           `json:"renames"`
	Kept         []renameRow           `json:"kept"`
	Problems     []problemRow          `json:"problems"`
	// SettingsRules are the rules of settings files among the roots written in legacy
	// spellings (reported, never rewritten).
	SettingsRules []settingsRuleRow `json:"settings_rules"`
	// Identities are the raw MCP identities (server key, raw tool name) the stores record:
	// Codex invocation records in rollouts and mcpToolCall items of thread_history_*.sqlite.
	// Never rewritten; they name the tools Codex calls, so they feed the Codex namer.
	Identities []identityRow `json:"identities"`
	// Codex names, per Codex home, the config.toml and inventory Codex rollouts were planned
	// with (absent when the run found no Codex rollout).
	Codex []*codexInfo `json:"codex,omitempty"`
}

// identityRow is one raw MCP identity recorded in the stores: how many records hold it, in how
// many stores.
type identityRow struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Count  int    `json:"count"`
	Stores int    `json:"stores"`
}

func identityTable(rep *scanReport) *reports.Table {
	t := &reports.Table{Columns: []string{"server", "raw tool", "records", "stores"}}
	for _, r := range rep.Identities {
		t.Add(r.Server, r.Tool, fmt.Sprint(r.Count), fmt.Sprint(r.Stores))
	}
	return t
}

type storeRow struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Profile is the SQLite profile a database was read with ("opencode"); text tables show it
	// as the kind.
	Profile string `json:"profile,omitempty"`
	// Bytes is the store's size when it was read.
	Bytes    int64  `json:"bytes"`
	Records  int64  `json:"records"`
	Sites    int    `json:"sites"`
	Rewrite  int    `json:"rewrite"`
	Kept     int    `json:"kept"`
	Problems int    `json:"problems"`
	Error    string `json:"error,omitempty"`
	// InUse is set when Error says another process kept the store locked (exit 4).
	InUse bool `json:"in_use,omitempty"`
}

// nameText is a stored name in a report: text tables show Site.DisplayName (a lone surrogate as
// the text \ud800); JSON has the exact string, a lone surrogate written as a \uXXXX escape,
// so JSON.parse gives back the very same UTF-16 units.
type nameText struct {
	text  string
	units []uint16 // set only for a name with a lone surrogate
}

func siteName(s *store.Site) nameText { return nameText{text: s.DisplayName(), units: s.Units} }

func (n nameText) String() string { return n.text }

// MarshalJSON writes the exact name.
func (n nameText) MarshalJSON() ([]byte, error) {
	if n.units != nil {
		return jsonscan.AppendQuoteUnits(nil, n.units), nil
	}
	return json.Marshal(n.text)
}

// UnmarshalJSON reads a name back (tests); a lone surrogate becomes U+FFFD.
func (n *nameText) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &n.text) }

type renameRow struct {
	Old   nameText `json:"old"`
	New   string   `json:"new,omitempty"`
	Class string   `json:"class"`
	// Reasons say why a legacy-dotted name is rejected (mcpname.RejectReasons: "dotted",
	// "non-ascii", "over-long", …); text tables show them as the class ("legacy-non-ascii").
	Reasons []string `json:"reasons,omitempty"`
	Count   int      `json:"count"`
	Note    string   `json:"note,omitempty"`
}

// rejectReasons is mcpname.RejectReasons of a legacy-dotted site (nil for other classes).
func rejectReasons(c mcpname.Class, s *store.Site) []string {
	if c != mcpname.ClassLegacyDotted {
		return nil
	}
	if s.Units != nil {
		return mcpname.RejectReasonsUnits(s.Units)
	}
	return mcpname.RejectReasons(s.Name)
}

// classLabel is the class a text table shows: a legacy-dotted name is named by what is wrong
// with it ("legacy-dotted", "legacy-non-ascii", "legacy-dotted+over-long"), so a name without
// a dot is not called dotted; other classes as they are.
func classLabel(c mcpname.Class, s *store.Site) string {
	return reasonLabel(string(c), rejectReasons(c, s))
}

func reasonLabel(class string, reasons []string) string {
	if class != string(mcpname.ClassLegacyDotted) || len(reasons) == 0 {
		return class
	}
	return "legacy-" + strings.Join(reasons, "+")
}

// kindLabel is the kind a text table shows: a database's profile name, else its kind.
func kindLabel(kind, profile string) string {
	if profile != "" {
		return profile
	}
	return kind
}

// profileOf is the SQLite profile name of st ("" for other stores or before detection).
func profileOf(st store.Store) string {
	if db, ok := st.(*sqlite.Store); ok && db.Profile() != nil {
		return db.Profile().Name
	}
	return ""
}

// storesPhrase counts stores as files and databases: "1 file", "1 database", "2 files and 1 database".
func storesPhrase(stores, dbs int) string {
	files := stores - dbs
	switch {
	case dbs == 0:
		return plural(files, "file")
	case files == 0:
		return plural(dbs, "database")
	}
	return plural(files, "file") + " and " + plural(dbs, "database")
}

func sortedRows(m map[[3]string]*renameRow) []renameRow {
	out := make([]renameRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Old.text != out[j].Old.text {
			return out[i].Old.text < out[j].Old.text
		}
		return out[i].New < out[j].New
	})
	return out
}

// summaryLine is the closing sentence of scan and fix ("would rewrite …", "rewrote …"). Every
// legacy name left in place is counted: middle-truncated ones (kept by design) and any other
// kept one (a lossy name without --rewrite-lossy, a key clash, a file that must not be
// written), so "nothing to change" never hides a name a provider still rejects.
func (a *aggregate) summaryLine(applied bool) string {
	t := a.rep.Totals
	kept := fmt.Sprintf("%s kept", plural(t.KeptTruncated, "legacy truncated name"))
	if other := t.Kept - t.KeptTruncated; other > 0 {
		kept += fmt.Sprintf("; %s kept (see the notes and warnings)", plural(other, "other legacy name"))
	}
	if t.Rewrite == 0 {
		return fmt.Sprintf("nothing to change: no name needs rewriting in %s; %s", plural(t.Stores, "store"), kept) + a.leftOutPhrase()
	}
	verb := "would rewrite"
	if applied {
		verb = "rewrote"
	}
	return fmt.Sprintf("%s %s in %s; %s", verb, plural(t.Rewrite, "name"), storesPhrase(t.RewriteStores, a.rewriteDBs), kept) + a.leftOutPhrase()
}

// leftOutPhrase is the end of a closing line when stores could not be read ("" when none):
// "; 1 store left out (in use; see errors)", "; 3 stores left out (see errors)", so a line
// counting only the stores read is never taken for all clean.
func (a *aggregate) leftOutPhrase() string {
	switch {
	case a.leftOut == 0:
		return ""
	case a.leftOutInUse == a.leftOut:
		return fmt.Sprintf("; %s left out (in use; see errors)", plural(a.leftOut, "store"))
	case a.leftOutInUse > 0:
		return fmt.Sprintf("; %s left out (%d in use; see errors)", plural(a.leftOut, "store"), a.leftOutInUse)
	}
	return fmt.Sprintf("; %s left out (see errors)", plural(a.leftOut, "store"))
}

// keptLine is the sentence after the summary when names a provider rejects were kept ("" when
// none): how many, why (per class) and how to fix them, so "nothing to change" is never read
// as "all clean" (issue 8 item 3). --fail-on kept turns it into exit status exitFinding.
func (a *aggregate) keptLine() string {
	n := a.rep.Totals.KeptRejected
	if n == 0 {
		return ""
	}
	var why []string
	for _, c := range slices.Sorted(maps.Keys(a.keptRejected)) {
		why = append(why, fmt.Sprintf("%d %s (%s)", a.keptRejected[c], c, keptWhy(c, a.rep.Codex)))
	}
	verb := "were"
	if n == 1 {
		verb = "was"
	}
	return fmt.Sprintf("%s a provider rejects %s kept: %s; a session holding them still fails where they are sent back (exit %d with --fail-on kept)",
		plural(n, "name"), verb, strings.Join(why, "; "), exitFinding)
}

// keptWhy says why names of a class were kept although a provider rejects them, and how to
// get them rewritten. For Codex, homes are where the rollouts were planned from (codexInfo):
// giving the whole Codex home as PATH is only suggested when some rollout was not planned with
// a home of PATH.
func keptWhy(c mcpname.Class, homes []*codexInfo) string {
	switch c {
	case rewrite.ClassCodexUnattributed:
		if len(homes) > 0 && !slices.ContainsFunc(homes, func(ci *codexInfo) bool { return ci.ConfigFrom != codexFromPath }) {
			return "raw MCP identity unknown; fix: pass --inventory or --codex-config (the Codex home given has no config.toml server key and no thread history matching these calls)"
		}
		return "raw MCP identity unknown; fix: pass --inventory or --codex-config, or give the whole Codex home as PATH so its config.toml and thread_history_*.sqlite are read"
	case mcpname.ClassLegacyTruncatedDotted:
		return "kept by --keep-truncated; fix: run without it"
	default:
		return "not rewritable here: a key clash or a file that must not be written; see the notes and warnings"
	}
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
func (a *aggregate) endCode(env *Env, cmd string, failOnKept bool) error {
	switch {
	case a.inUse > 0:
		return withCode(exitInUse)
	case a.failed:
		return withCode(exitPartial)
	}
	return a.keptFinding(env, cmd, failOnKept)
}

func (a *aggregate) keptFinding(env *Env, cmd string, failOnKept bool) error {
	if !failOnKept || a.rep.Totals.KeptRejected == 0 {
		return nil
	}
	fmt.Fprintf(env.Err, "%s: --fail-on kept: %s a provider rejects kept\n", cmd, plural(a.rep.Totals.KeptRejected, "name"))
	return withCode(exitFinding)
}

// appliedLine is the closing sentence of fix --apply: what was really rewritten.
func (a *aggregate) appliedLine(names, stores, dbs int, skipped []skippedRow) string {
	t := a.rep.Totals
	s := fmt.Sprintf("rewrote %s in %s; %s kept", plural(names, "name"), storesPhrase(stores, dbs), plural(t.KeptTruncated, "legacy truncated name"))
	if other := t.Kept - t.KeptTruncated; other > 0 {
		s += fmt.Sprintf("; %s kept (see the notes and warnings)", plural(other, "other legacy name"))
	}
	if len(skipped) > 0 {
		s += "; " + skippedPhrase(skipped)
	}
	return s + a.leftOutPhrase()
}

// classTable counts names per class; labels splits legacy-dotted by reason (classLabel).
func classTable(rep *scanReport, labels map[string]int) *reports.Table {
	t := &reports.Table{Columns: []string{"class", "names", "fix action"}}
	for _, c := range append(slices.Clone(mcpname.Classes), rewrite.CodexClasses...) {
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
			t.Add(s.Path, kindLabel(s.Kind, s.Profile), "-", "-", "-", "-", what)
			continue
		}
		t.Add(s.Path, kindLabel(s.Kind, s.Profile), fmt.Sprint(s.Records), fmt.Sprint(s.Sites), fmt.Sprint(s.Rewrite), fmt.Sprint(s.Kept), fmt.Sprint(s.Problems))
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
		t.Add(r.Old.String(), r.New, reasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count))
	}
	for _, r := range kept {
		t.Add(r.Old.String(), "(kept)", reasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count))
	}
	return t
}

// writeCodexInfo prints which Codex config and inventory the plan used (nothing when the run
// found no Codex rollout).
func writeCodexInfo(w io.Writer, rep *scanReport) {
	if len(rep.Codex) > 0 {
		fmt.Fprintln(w)
	}
	for _, ci := range rep.Codex {
		fmt.Fprintln(w, reports.Printable(ci.text(len(rep.Codex) > 1)))
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

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
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

// agentOf is the agent a store belongs to, from its kind label: "qwen" (qwen-session, …),
// "codex" (codex-rollout, the codex and codex-state databases), else the profile
// ("opencode", "crush", "goose").
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
		l := kindLabel(s.Kind, s.Profile)
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
		t.Add(r.Old.String(), reasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count), why)
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
