package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// ReadPlanFile reads a fix --plan file (untrusted input, rewrite.ReadPlanFile; docs/plan.md)
// with the store kinds agent/all can open: a refusal is an error naming the file (the CLI's
// exit 1), nothing is changed.
func ReadPlanFile(path string) (*rewrite.PlanFile, error) {
	pf, _, err := readPlanFile(path)
	return pf, err
}

// readPlanFile is ReadPlanFile; it also returns the fstat of the file read (who wrote the plan:
// its owner). The file is opened as a store is (fileio.OpenStore: a regular file, no FIFO waited
// on, as root no link followed out of its owner's reach).
func readPlanFile(path string) (*rewrite.PlanFile, os.FileInfo, error) {
	f, fi, err := fileio.OpenStore(path, store.FileID{})
	if err != nil {
		return nil, nil, fmt.Errorf("plan %s: %s", path, ErrReason(err))
	}
	defer f.Close()
	pf, err := rewrite.ReadPlanFile(path, f, func(k store.Kind) bool {
		_, err := all.OpenWith(store.Ref{Path: "/", Kind: k}, all.Options{}) // does not touch a store
		return err == nil
	}, planMembers())
	return pf, fi, err
}

// OptionsOfPlan turns a plan's recorded naming options into run options, keeping what is not a
// naming option (the Prepare cache, the state directory) and whether MCP servers are started
// (po.Discover, po.DiscoverUntrusted: the command line's, never the plan's; LoadPlan checks them
// against the plan's "discover"). The error is a bad recorded busy_timeout (ReadPlanFile
// already refuses one).
func OptionsOfPlan(o rewrite.PlanOptions, po Options) (Options, error) {
	po.KeepTruncated, po.RewriteLossy, po.Inventory, po.Agent = o.KeepTruncated, o.RewriteLossy, o.Inventory, o.Agent
	po.Profile = o.Profile
	po.AgentOptions = agent.Values{}
	for _, opt := range planOptions() {
		if vs := o.AgentValues(opt.Plan); len(vs) > 0 {
			po.AgentOptions[opt.Name] = vs
		}
	}
	if o.BusyTimeout != "" {
		d, err := time.ParseDuration(o.BusyTimeout) // checked by ReadPlanFile
		if err != nil {
			return po, err
		}
		po.BusyTimeout = d
	}
	return po, nil
}

// RecordedOptions are a run's naming options as a plan file records them (paths made absolute).
func RecordedOptions(po Options) rewrite.PlanOptions {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	o := rewrite.PlanOptions{KeepTruncated: po.KeepTruncated, RewriteLossy: po.RewriteLossy, Inventory: abs(po.Inventory),
		Agent: po.Agent, Discover: po.Discover, Profile: abs(po.Profile), BusyTimeout: po.BusyTimeout.String()}
	for _, opt := range planOptions() {
		var vs []string
		for _, v := range po.AgentOptions.Strings(opt.Name) {
			if opt.File {
				v = abs(v)
			}
			vs = append(vs, v)
		}
		o.SetAgentValues(planMember(opt), vs)
	}
	return o
}

// planOptions are the agents' options a plan file records (agent.Option.Plan), in agent/all's
// order.
func planOptions() []agent.Option {
	var out []agent.Option
	for _, a := range all.Agents {
		for _, o := range all.OptionsOf(a) {
			if o.Plan != "" {
				out = append(out, o)
			}
		}
	}
	return out
}

// planMember is how a plan file records opt (its Plan key; rewrite.PlanMember).
func planMember(opt agent.Option) rewrite.PlanMember {
	return rewrite.PlanMember{Key: opt.Plan, Bool: opt.Bool, Repeatable: opt.Repeatable, File: opt.File, After: opt.PlanAfter}
}

// planMembers are the members the agents' options may have in a plan file's "options", in
// agent/all's order (what ReadPlanFile accepts beside the generic ones).
func planMembers() []rewrite.PlanMember {
	var out []rewrite.PlanMember
	for _, opt := range planOptions() {
		out = append(out, planMember(opt))
	}
	return out
}

// PlanCollector gathers the plan of a run, store by store, as it streams: only the stores with
// something to rewrite, and only their edits. Names counts the planned names.
type PlanCollector struct {
	Stores []rewrite.PlannedStore
	Names  int
	// part gathers a store planned batch by batch (rewrite.Batch) until its last result.
	part *rewrite.PlanBuilder
}

// Wrap returns each with the collector in front: every result is collected, then passed on.
func (pc *PlanCollector) Wrap(each func(*rewrite.StoreResult) error) func(*rewrite.StoreResult) error {
	return func(r *rewrite.StoreResult) error {
		if r.Batch != nil && r.Batch.Index == 0 || r.Batch == nil {
			pc.part = rewrite.NewPlanBuilder()
		}
		if r.Plan != nil {
			pc.part.Add(r.Plan)
			if r.Batch == nil || r.Batch.Last {
				if ps, ok := pc.part.Done(r.Plan.Snap, report.ProfileOf(r.Store)); ok {
					pc.Stores = append(pc.Stores, ps)
					pc.Names += ps.Names
				}
			}
		}
		return each(r)
	}
}

// Plan is the collected plan (no creation time nor options set).
func (pc *PlanCollector) Plan() *rewrite.PlanFile { return &rewrite.PlanFile{Stores: pc.Stores} }

// LoadedPlan is a fix --plan file made ready to apply: Options (po with the plan's naming
// options, validated), Paths (the stores it names) and Planned (its stores by path, for
// rewrite.ProcessOptions.Planned); Recorded and Created are what the plan says, Author who
// owns the file (the plan's author) and Foreign whether that is another user than this
// process's (LoadPlan's rules for such a plan).
type LoadedPlan struct {
	Options  Options
	Paths    []string
	Planned  map[string]*rewrite.PlannedStore
	Recorded rewrite.PlanOptions
	Created  time.Time
	Author   uint32
	Foreign  bool
}

// ForeignBusyTimeout is the longest --busy-timeout a plan another user wrote may make this run
// wait for each database's lock (that user can hold the lock).
const ForeignBusyTimeout = time.Minute

// LoadPlan reads the plan file at path (ReadPlanFile) and applies its recorded options to po.
// Recorded options that do not validate refuse the plan (a *rewrite.PlanFileError, Where
// "options": exit 1, not a usage error, since no flag was wrong). A plan with nothing to
// rewrite has no Paths.
//
// A plan makes sessionfix do only what it would do on its own (docs/plan.md, issue 30 findings
// 1 and 2):
//   - it never starts MCP servers: a plan made with --discover needs --discover given with
//     --plan (and one made without refuses it), --discover-untrusted only from the command
//     line;
//   - a plan another user wrote (Foreign: the file's owner is not this process's user) carries
//     no "profile" or "inventory" (they decide what is rewritten: a profile makes any JSON
//     value a name site), no "busy_timeout" over ForeignBusyTimeout, and its other file options
//     (an agent's config file, MCP configs) must be files its author owns; as root, every store it
//     names must be its author's (Options.StoresOwnedBy: discovery refuses the others).
//
// Such a plan is refused as a whole (a *rewrite.PlanFileError naming the member: exit 1,
// nothing changed); a store of another owner is an error of the run (exit 3).
func LoadPlan(path string, po Options) (*LoadedPlan, error) {
	pf, fi, err := readPlanFile(path)
	if err != nil {
		return nil, err
	}
	bad := func(where, format string, args ...any) error {
		return &rewrite.PlanFileError{File: path, Where: where, Reason: fmt.Sprintf(format, args...)}
	}
	switch rec := pf.Options.Discover; {
	case rec && !po.Discover:
		return nil, bad("options.discover", "the plan was made with --discover, and a plan never starts MCP servers: give --discover with --plan to start them again (their commands run as you), or make a new plan without it")
	case !rec && po.Discover:
		return nil, usagef("--discover: the plan %s was made without it (planning its stores with the servers' tools would not give the planned edits); drop --discover", path)
	}
	lp := &LoadedPlan{Recorded: pf.Options, Created: pf.Created}
	if uid, ok := owner.UID(fi); ok {
		lp.Author = uid
		lp.Foreign = uid != uint32(owner.Euid())
	}
	if lp.Foreign {
		who := fmt.Sprintf("%s owns %s", owner.Describe(lp.Author), path)
		switch {
		case pf.Options.Profile != "":
			return nil, bad("options.profile", "a plan another user wrote (%s) does not carry a --profile: a profile decides what is rewritten in any database this run can write; make the plan yourself", who)
		case pf.Options.Inventory != "":
			return nil, bad("options.inventory", "a plan another user wrote (%s) does not carry an --inventory: an inventory decides the names written; make the plan yourself", who)
		}
		if d, err := time.ParseDuration(pf.Options.BusyTimeout); err == nil && d > ForeignBusyTimeout {
			return nil, bad("options.busy_timeout", "%s is longer than a plan another user wrote (%s) may make this run wait for a lock (at most %s)", pf.Options.BusyTimeout, who, ForeignBusyTimeout)
		}
		for _, opt := range planOptions() {
			if !opt.File {
				continue
			}
			for _, f := range pf.Options.AgentValues(opt.Plan) {
				real, err := owner.Resolve(f)
				var rfi os.FileInfo
				if err == nil {
					rfi, err = os.Lstat(real)
				}
				if err != nil {
					return nil, bad("options."+opt.Plan, "%s: %s (a plan another user wrote, %s, reads only that user's files)", f, ErrReason(err), who)
				}
				if uid, ok := owner.UID(rfi); ok && uid != lp.Author {
					return nil, bad("options."+opt.Plan, "%s belongs to %s, not to the plan's author (%s): a plan another user wrote reads only that user's files", f, owner.Describe(uid), who)
				}
			}
		}
		if owner.AsRoot() {
			author := lp.Author
			po.StoresOwnedBy = &author
		}
	}
	// Your own plan: its profile and inventory decide what is rewritten and to what, and the
	// plan records their paths, not their content; a file another user owns or can write could
	// have been changed since (issue 30 finding 2).
	for _, f := range []struct{ member, path string }{{"options.profile", pf.Options.Profile}, {"options.inventory", pf.Options.Inventory}} {
		if f.path == "" || lp.Foreign {
			continue
		}
		_, rfi, err := owner.ReadFile(f.path)
		if err != nil {
			return nil, bad(f.member, "%s: %s", f.path, ErrReason(err))
		}
		if why := owner.Untrusted(rfi); why != "" {
			return nil, bad(f.member, "%s: %s: a plan carries no profile or inventory another user can change since it was made; copy it somewhere only you can write and make the plan again", f.path, why)
		}
	}
	if po, err = OptionsOfPlan(pf.Options, po); err != nil {
		return nil, err
	}
	if err := po.Validate(); err != nil {
		return nil, &rewrite.PlanFileError{File: path, Where: "options", Reason: ErrReason(err)}
	}
	lp.Options, lp.Paths, lp.Planned = po, pf.Paths(), pf.Index()
	return lp, nil
}

// Write writes the collected plan to path (fix --plan-out; "-" is out, though fix refuses it)
// by fileio.WriteOutputContext's rules: a sealed plan file (rewrite.MarshalPlanFile) created
// now (nil: time.Now) with the naming options po records (RecordedOptions). An error names
// --plan-out.
func (c *PlanCollector) Write(ctx context.Context, out io.Writer, path string, po Options, now func() time.Time) error {
	pf := c.Plan()
	if now == nil {
		now = time.Now
	}
	pf.Created = now().UTC()
	pf.Options = RecordedOptions(po)
	b, err := rewrite.MarshalPlanFile(pf)
	if err != nil {
		return err
	}
	if err := fileio.WriteOutputContext(ctx, out, path, b); err != nil {
		return fmt.Errorf("--plan-out: %w", err)
	}
	return nil
}
