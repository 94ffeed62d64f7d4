package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
)

// namingFlags are the flags a plan records (rewrite.PlanOptions): fix --plan refuses them.
var namingFlags = []string{"keep-truncated", "rewrite-lossy", "inventory", "agent", "codex-config", "discover", "profile", "busy-timeout", "mcp-config", "allow-shared"}

// checkPlanFlags refuses the combinations of --plan-out and --plan that make no sense, before
// anything is read.
func checkPlanFlags(opts fixOptions) error {
	switch {
	case opts.planSet && opts.Plan == "":
		return usageErrorf("--plan needs a file name; it was given an empty one")
	case opts.PlanOut != "" && opts.Plan != "":
		return usageErrorf("--plan-out and --plan exclude each other: --plan-out writes a plan (a dry run), --plan applies one")
	case opts.PlanOut != "" && opts.Apply:
		return usageErrorf("--plan-out writes the plan of a dry run for review; apply it later with fix --apply --plan FILE (nothing was changed)")
	case opts.PlanOut == "-":
		return usageErrorf("--plan-out needs a file: standard output carries the report")
	case opts.Plan != "" && !opts.Apply:
		return usageErrorf("--plan applies a plan: it needs --apply (fix --plan-out FILE makes one)")
	case opts.Plan != "" && len(opts.Paths) > 0:
		return usageErrorf("--plan takes its stores from the plan: give no PATH")
	case opts.Plan != "" && len(opts.namingSet) > 0:
		return usageErrorf("--plan records the naming options it was made with: drop %s", strings.Join(opts.namingSet, ", "))
	}
	return nil
}

// readPlanFile reads a --plan file (untrusted input, rewrite.ReadPlanFile): a refusal is an
// error naming the file (exit 1), nothing is changed.
func readPlanFile(path string) (*rewrite.PlanFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %s", path, pipeline.ErrReason(err))
	}
	defer f.Close()
	return rewrite.ReadPlanFile(path, f, func(k store.Kind) bool {
		_, err := all.OpenWith(store.Ref{Path: "/", Kind: k}, all.Options{}) // does not touch a store
		return err == nil
	})
}

// planOptionsOf turns a plan's recorded naming options into fix's (keeping what is not a
// naming option: the Codex cache, the state directory).
func planOptionsOf(o rewrite.PlanOptions, po pipeline.Options) (pipeline.Options, error) {
	po.KeepTruncated, po.RewriteLossy, po.Inventory, po.Agent = o.KeepTruncated, o.RewriteLossy, o.Inventory, o.Agent
	po.CodexConfig, po.Discover, po.Profile = o.CodexConfig, o.Discover, o.Profile
	po.MCPConfigs, po.AllowShared = o.MCPConfig, o.AllowShared
	if o.BusyTimeout != "" {
		d, err := time.ParseDuration(o.BusyTimeout) // checked by ReadPlanFile
		if err != nil {
			return po, err
		}
		po.BusyTimeout = d
	}
	return po, nil
}

// recordedOptions are fix's naming options as a plan records them (paths absolute).
func recordedOptions(po pipeline.Options) rewrite.PlanOptions {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	var mcp []string
	for _, f := range po.MCPConfigs {
		mcp = append(mcp, abs(f))
	}
	return rewrite.PlanOptions{MCPConfig: mcp, AllowShared: po.AllowShared, KeepTruncated: po.KeepTruncated, RewriteLossy: po.RewriteLossy, Inventory: abs(po.Inventory),
		Agent: po.Agent, CodexConfig: abs(po.CodexConfig), Discover: po.Discover, Profile: abs(po.Profile), BusyTimeout: po.BusyTimeout.String()}
}

// planCollector gathers the plan of a run, store by store, as it streams (only the stores with
// something to rewrite, and only their edits).
type planCollector struct {
	stores []rewrite.PlannedStore
	names  int
	// part gathers a store planned batch by batch (rewrite.Batch) until its last result.
	part *rewrite.PlanBuilder
}

func (pc *planCollector) wrap(each func(*rewrite.StoreResult) error) func(*rewrite.StoreResult) error {
	return func(r *rewrite.StoreResult) error {
		if r.Batch != nil && r.Batch.Index == 0 || r.Batch == nil {
			pc.part = rewrite.NewPlanBuilder()
		}
		if r.Plan != nil {
			pc.part.Add(r.Plan)
			if r.Batch == nil || r.Batch.Last {
				if ps, ok := pc.part.Done(r.Plan.Snap, pipeline.ProfileOf(r.Store)); ok {
					pc.stores = append(pc.stores, ps)
					pc.names += ps.Names
				}
			}
		}
		return each(r)
	}
}

func (pc *planCollector) plan() *rewrite.PlanFile { return &rewrite.PlanFile{Stores: pc.stores} }

// write writes the collected plan to --plan-out and says so (standard output for text, standard
// error with --format json, whose standard output is one document).
func (pc *planCollector) write(ctx context.Context, env *Env, opts fixOptions) error {
	pf := pc.plan()
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	pf.Created = now().UTC()
	pf.Options = recordedOptions(opts.Common)
	b, err := rewrite.MarshalPlanFile(pf)
	if err != nil {
		return err
	}
	if err := fileio.WriteOutputContext(ctx, env.Out, opts.PlanOut, b); err != nil {
		return fmt.Errorf("--plan-out: %w", err)
	}
	w := env.Out
	if opts.Format == "json" {
		w = env.Err
	}
	fmt.Fprintf(w, "plan written to %s (%s in %s); nothing was changed; apply exactly this plan with: sessionfix fix --apply --yes --plan %s\n",
		opts.PlanOut, plural(pc.names, "name"), plural(len(pc.stores), "store"), reports.ShellQuote(opts.PlanOut))
	return nil
}
