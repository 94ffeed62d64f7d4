// Package cline is Cline's MCP approval semantics per generation, as pure functions over
// values: what becomes of each MCP tool of settings/cline_mcp_settings.json — approved unasked,
// asked, not offered — under a Cline 2.x or 3.x release and the way it is run
// (fixtures/cline-real/README.md "Rule behaviour observed" and rules.tsv, measured with the npm
// releases cline 2.18.0 and 3.0.65; docs/cline.md).
//
//   - Cline 2.x keys each server's "autoApprove" list on the raw tool name: run interactively
//     (the VS Code extension, the CLI's TUI) a listed tool runs unasked and an unlisted one is
//     asked (the code: mcpServers[server].autoApprove.includes(tool)); "cline task -y", and the
//     headless "--json" mode even without -y, ran every tool. A tool whose offered name
//     (uid + "0mcp0" + tool) would exceed 64 UTF-16 units is not offered at all.
//   - Cline 3.x (3.0.65) reads the same file with a schema that keeps only transport, disabled,
//     timeout, metadata and oauth settings: "autoApprove" is dropped. With the CLI's default
//     --auto-approve every MCP tool ran unasked (all 11 of the recording); in ACP mode every one
//     was asked, listed or not.
//
// So a 2.x allowlist silently became "approve everything" under 3.x: Compare gives each tool's
// outcome before and after, and Findings reports each widening as a "gained" finding.
//
// The API:
//
//	ParseSettings(b []byte) (Settings, error)          cline_mcp_settings.json: servers in file order
//	OutcomeOf(r Release, s Server, tool string) Outcome
//	Compare(set Settings, tools []Tool, before, after Release) []ToolOutcome
//	Findings(outs []ToolOutcome, before, after Release) []Finding   the widenings ("gained"), in tool order
//
// Releases: Gen2Interactive (2.x as the allowlist means it), Gen2Yolo, Gen3AutoApprove (3.x's
// default), Gen3ACP.
package cline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Generation is a Cline generation: 2 (the extension core and CLI 2.x, tasks/) or 3 (the SDK
// CLI 3.x, sessions/).
type Generation int

// Cline generations.
const (
	Gen2 Generation = 2
	Gen3 Generation = 3
)

// Mode is how a release is run, which decides who approves an MCP call.
type Mode string

// Modes of running Cline.
const (
	// ModeInteractive: 2.x in the VS Code extension or the CLI's TUI; autoApprove is honoured.
	ModeInteractive Mode = "interactive"
	// ModeYolo: 2.x "cline task -y", or headless "--json" without -y (measured: every tool ran).
	ModeYolo Mode = "yolo"
	// ModeAutoApprove: 3.x with the CLI's default --auto-approve (every tool ran unasked).
	ModeAutoApprove Mode = "auto-approve"
	// ModeACP: 3.x as an ACP agent ("cline --acp"): every MCP call asked, listed or not.
	ModeACP Mode = "acp"
)

// Release is a generation run in a mode.
type Release struct {
	Generation Generation
	Mode       Mode
}

// The releases of the recording.
var (
	Gen2Interactive = Release{Gen2, ModeInteractive}
	Gen2Yolo        = Release{Gen2, ModeYolo}
	Gen3AutoApprove = Release{Gen3, ModeAutoApprove}
	Gen3ACP         = Release{Gen3, ModeACP}
)

func (r Release) String() string { return fmt.Sprintf("Cline %d.x (%s)", r.Generation, r.Mode) }

// Outcome is what becomes of a call of one MCP tool.
type Outcome string

// Outcomes of a tool.
const (
	Approved   Outcome = "approved"    // runs unasked
	Asked      Outcome = "asked"       // the user is asked first
	Disabled   Outcome = "disabled"    // its server is disabled: not offered
	NotOffered Outcome = "not-offered" // 2.x: its name would exceed 64 UTF-16 units
)

// Server is one server entry of cline_mcp_settings.json as approval sees it.
type Server struct {
	// Key is the server key (raw: "foo.bar").
	Key string
	// Disabled is its "disabled" flag.
	Disabled bool
	// AutoApprove is its "autoApprove" list of raw tool names, in file order.
	AutoApprove []string
}

// Settings is the "mcpServers" object of cline_mcp_settings.json, servers in file order.
type Settings struct{ Servers []Server }

// Server returns the server with key k, or nil.
func (s Settings) Server(k string) *Server {
	for i := range s.Servers {
		if s.Servers[i].Key == k {
			return &s.Servers[i]
		}
	}
	return nil
}

// ErrBadSettings means cline_mcp_settings.json is not shaped as Cline writes it.
var ErrBadSettings = errors.New("invalid Cline MCP settings")

// ParseSettings reads cline_mcp_settings.json (standard JSON, as Cline writes it): the servers
// of "mcpServers" in file order (a repeated key keeps its first place and its last value, as
// JSON.parse does), each with "disabled" and "autoApprove". A missing "mcpServers" is no
// server; a member of another type than Cline writes is ErrBadSettings naming it.
func ParseSettings(b []byte) (Settings, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return Settings{}, fmt.Errorf("%w: %v", ErrBadSettings, err)
	}
	raw, ok := doc["mcpServers"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return Settings{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return Settings{}, fmt.Errorf("%w: mcpServers is not an object", ErrBadSettings)
	}
	var set Settings
	at := map[string]int{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return Settings{}, fmt.Errorf("%w: %v", ErrBadSettings, err)
		}
		key := t.(string)
		var e struct {
			Disabled    *bool            `json:"disabled"`
			AutoApprove *json.RawMessage `json:"autoApprove"`
		}
		if err := dec.Decode(&e); err != nil {
			return Settings{}, fmt.Errorf("%w: mcpServers.%s: %v", ErrBadSettings, key, err)
		}
		s := Server{Key: key, Disabled: e.Disabled != nil && *e.Disabled}
		if e.AutoApprove != nil && string(bytes.TrimSpace(*e.AutoApprove)) != "null" {
			if err := json.Unmarshal(*e.AutoApprove, &s.AutoApprove); err != nil {
				return Settings{}, fmt.Errorf("%w: mcpServers.%s.autoApprove: a list of tool names", ErrBadSettings, key)
			}
		}
		if i, seen := at[key]; seen {
			set.Servers[i] = s
			continue
		}
		at[key] = len(set.Servers)
		set.Servers = append(set.Servers, s)
	}
	return set, nil
}

// offered2 reports whether Cline 2.x offers tool at all: its name, uid ("c" + 5 characters) +
// "0mcp0" + tool, is at most 64 UTF-16 units (mcpname.Cline2Name).
func offered2(tool string) bool {
	_, ok := mcpname.Cline2Name("cXXXXX", tool)
	return ok
}

// OutcomeOf is the outcome of a call of tool (raw name) of server s under release r.
func OutcomeOf(r Release, s Server, tool string) Outcome {
	switch {
	case s.Disabled:
		return Disabled
	case r.Generation == Gen2 && !offered2(tool):
		return NotOffered
	}
	switch r.Mode {
	case ModeYolo, ModeAutoApprove:
		return Approved
	case ModeACP:
		return Asked
	}
	// ModeInteractive: 2.x honours the list, keyed on the raw tool name. 3.x never reads it.
	if r.Generation == Gen2 && slices.Contains(s.AutoApprove, tool) {
		return Approved
	}
	return Asked
}

// Tool is one raw MCP tool: a server key and the tool name it lists.
type Tool struct{ Server, Tool string }

// ToolOutcome is one tool's outcome before and after.
type ToolOutcome struct {
	Tool Tool
	// Listed: the tool is in its server's autoApprove list.
	Listed bool
	// Unknown: the tool was named only by autoApprove (not among the tools given: the
	// server may no longer list it).
	Unknown bool
	// Name2 and Name3 are the names each generation offers ("" when 2.x does not offer it;
	// Name2's uid is the placeholder "c?????": the real one changes at every start).
	Name2, Name3  string
	Before, After Outcome
	// Gained: After runs the tool unasked and Before did not (asked, or not offered).
	Gained bool
}

// Compare gives, for every tool (the tools given, in order, then each autoApprove entry of
// set not among them, in file order), its outcome under before and after. A tool of a server
// set does not declare is taken as a tool of an enabled server with no autoApprove.
func Compare(set Settings, tools []Tool, before, after Release) []ToolOutcome {
	all := slices.Clone(tools)
	for _, s := range set.Servers {
		for _, t := range s.AutoApprove {
			if !slices.Contains(all, Tool{s.Key, t}) {
				all = append(all, Tool{s.Key, t})
			}
		}
	}
	out := make([]ToolOutcome, len(all))
	for i, t := range all {
		s := Server{Key: t.Server}
		if p := set.Server(t.Server); p != nil {
			s = *p
		}
		o := ToolOutcome{Tool: t, Listed: slices.Contains(s.AutoApprove, t.Tool), Unknown: i >= len(tools),
			Name3: mcpname.Cline3Name(t.Server, t.Tool), Before: OutcomeOf(before, s, t.Tool), After: OutcomeOf(after, s, t.Tool)}
		if n, ok := mcpname.Cline2Name("c?????", t.Tool); ok {
			o.Name2 = n
		}
		o.Gained = o.After == Approved && o.Before != Approved && o.Before != Disabled
		out[i] = o
	}
	return out
}

// Finding is one change of a tool's approval worth reporting.
type Finding struct {
	// Kind is "gained": the tool now runs unasked where it did not.
	Kind string
	ToolOutcome
	// Reason says why, in words ("not in autoApprove of lit: asked under Cline 2.x
	// (interactive); Cline 3.x drops autoApprove and --auto-approve runs it unasked").
	Reason string
}

// Findings lists the gained tools of outs, in their order.
func Findings(outs []ToolOutcome, before, after Release) []Finding {
	var out []Finding
	for _, o := range outs {
		if !o.Gained {
			continue
		}
		why := fmt.Sprintf("not in autoApprove of %s: asked under %s", o.Tool.Server, before)
		if o.Before == NotOffered {
			why = fmt.Sprintf("not offered under %s (its name would exceed %d)", before, mcpname.ClineMaxLength)
		}
		what := "runs it unasked"
		if after.Generation == Gen3 {
			what = "drops autoApprove, and " + string(after.Mode) + " runs it unasked"
		}
		out = append(out, Finding{Kind: "gained", ToolOutcome: o, Reason: fmt.Sprintf("%s; %s %s", why, after, what)})
	}
	return out
}
