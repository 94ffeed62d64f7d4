package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/all"
)

// ReadPlanFile reads a fix --plan file (untrusted input, rewrite.ReadPlanFile; docs/plan.md)
// with the store kinds store/all can open: a refusal is an error naming the file (the CLI's
// exit 1), nothing is changed.
func ReadPlanFile(path string) (*rewrite.PlanFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %s", path, ErrReason(err))
	}
	defer f.Close()
	return rewrite.ReadPlanFile(path, f, func(k store.Kind) bool {
		_, err := all.OpenWith(store.Ref{Path: "/", Kind: k}, all.Options{}) // does not touch a store
		return err == nil
	}, planMembers())
}

// OptionsOfPlan turns a plan's recorded naming options into run options, keeping what is not a
// naming option (the Prepare cache, the state directory). The error is a bad recorded
// busy_timeout (ReadPlanFile already refuses one).
func OptionsOfPlan(o rewrite.PlanOptions, po Options) (Options, error) {
	po.KeepTruncated, po.RewriteLossy, po.Inventory, po.Agent = o.KeepTruncated, o.RewriteLossy, o.Inventory, o.Agent
	po.Discover, po.Profile = o.Discover, o.Profile
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

// planOptions are the agents' options a plan file records (agent.Option.Plan), in store/all's
// order.
func planOptions() []agent.Option {
	var out []agent.Option
	for _, a := range all.Agents {
		for _, o := range a.Options {
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
// store/all's order (what ReadPlanFile accepts beside the generic ones).
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
				if ps, ok := pc.part.Done(r.Plan.Snap, ProfileOf(r.Store)); ok {
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
// rewrite.ProcessOptions.Planned).
type LoadedPlan struct {
	Options Options
	Paths   []string
	Planned map[string]*rewrite.PlannedStore
}

// LoadPlan reads the plan file at path (ReadPlanFile) and applies its recorded options to po.
// Recorded options that do not validate refuse the plan (a *rewrite.PlanFileError, Where
// "options": exit 1, not a usage error, since no flag was wrong). A plan with nothing to
// rewrite has no Paths.
func LoadPlan(path string, po Options) (*LoadedPlan, error) {
	pf, err := ReadPlanFile(path)
	if err != nil {
		return nil, err
	}
	if po, err = OptionsOfPlan(pf.Options, po); err != nil {
		return nil, err
	}
	if err := po.Validate(); err != nil {
		return nil, &rewrite.PlanFileError{File: path, Where: "options", Reason: ErrReason(err)}
	}
	return &LoadedPlan{Options: po, Paths: pf.Paths(), Planned: pf.Index()}, nil
}
