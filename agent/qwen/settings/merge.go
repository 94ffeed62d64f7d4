package settings

import (
	"fmt"
	"slices"
	"sort"
)

// MergedRule is one distinct rule string of a de-duplicated (UNION) list, with every entry
// that contributed it.
type MergedRule struct {
	// Text is the expanded rule string (Rule.Expanded): what Qwen Code evaluates. Duplicates
	// are removed by this exact string, as JavaScript's Set does.
	Text string `json:"text"`
	// Origins are the list entries carrying Text, in merge order (lowest scope first, then
	// file order). Never empty.
	Origins []Rule `json:"origins"`
}

// Merged is the effective configuration of several settings files, merged the way Qwen
// Code's loadSettings / customDeepMerge does (qwen-reference.md §4.6, §2.1, settingsSchema
// merge strategies), with every origin kept:
//
//   - permissions.allow / ask / deny, tools.exclude, tools.disabled: UNION (de-duplicated by
//     string, first occurrence first);
//   - tools.allowed, tools.core: REPLACE (the list of the last file that has the key);
//   - mcp.allowed / mcp.excluded: CONCAT (every entry, duplicates kept);
//   - mcpServers: SHALLOW_MERGE (a later file's server object replaces an earlier one with
//     the same key wholesale);
//   - tools.approvalMode, security.folderTrust.enabled: the last file that sets them.
//
// Then, as PermissionManager does: Allow = permissions.allow ++ tools.allowed and
// Deny = permissions.deny ++ tools.exclude, de-duplicated. v1 flat keys of files that Qwen
// Code migrates count as their v2 key.
type Merged struct {
	// Files in merge order (Scope.Rank, stable).
	Files []*File `json:"files"`
	// Allow, Ask, Deny: the persistent permission rule lists.
	Allow []MergedRule `json:"allow"`
	Ask   []MergedRule `json:"ask"`
	Deny  []MergedRule `json:"deny"`
	// Disabled: tools.disabled.
	Disabled []MergedRule `json:"disabled"`
	// Core: tools.core (REPLACE), the built-in allowlist; MCP tools are exempt.
	Core []Rule `json:"core"`
	// MCPAllowed, MCPExcluded: server-key globs (CONCAT).
	MCPAllowed  []Rule `json:"mcpAllowed"`
	MCPExcluded []Rule `json:"mcpExcluded"`
	// MCPServers: the effective servers, in first-seen key order, each from the last file
	// that defines it.
	MCPServers   []MCPServer `json:"mcpServers"`
	ApprovalMode string      `json:"approvalMode,omitempty"`
	FolderTrust  *bool       `json:"folderTrust,omitempty"`
	// Shadowed lists entries that are in the files but not in effect, with Rule.Ignored
	// saying why: ignored v1 keys, a REPLACE list replaced by a later scope, the
	// include/exclude lists of a server replaced by a later scope.
	Shadowed []Rule `json:"shadowed,omitempty"`
}

// Merge merges files (nil entries are skipped) in Scope.Rank order, stable for equal ranks.
// The caller leaves out the workspace file when the folder is untrusted (Qwen Code ignores
// workspace settings then).
func Merge(files ...*File) *Merged {
	var fs []*File
	for _, f := range files {
		if f != nil {
			fs = append(fs, f)
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Scope.Rank() < fs[j].Scope.Rank() })
	m := &Merged{Files: fs}

	var allow, ask, deny, exclude, disabled, allowedList []Rule
	var allowedFrom, coreFrom *File
	servers := map[string]int{}
	for _, f := range fs {
		if hasList(f, "tools.allowed", "allowedTools") {
			allowedFrom = f
		}
		if hasList(f, "tools.core", "coreTools") {
			coreFrom = f
		}
		if f.ApprovalMode != "" {
			m.ApprovalMode = f.ApprovalMode
		}
		if f.FolderTrust != nil {
			m.FolderTrust = f.FolderTrust
		}
		for _, s := range f.MCPServers {
			if i, ok := servers[s.Key]; ok {
				old := m.MCPServers[i]
				reason := fmt.Sprintf("server %q is replaced by %s (%s scope)", s.Key, f.Path, f.Scope)
				m.Shadowed = append(m.Shadowed, withIgnored(old.IncludeTools, reason)...)
				m.Shadowed = append(m.Shadowed, withIgnored(old.ExcludeTools, reason)...)
				m.MCPServers[i] = s
				continue
			}
			servers[s.Key] = len(m.MCPServers)
			m.MCPServers = append(m.MCPServers, s)
		}
	}
	for _, f := range fs {
		for _, r := range f.Rules {
			if r.Ignored != "" {
				m.Shadowed = append(m.Shadowed, r)
				continue
			}
			switch {
			case r.Kind == KindAllow && (r.Key == "tools.allowed" || r.V1):
				if f != allowedFrom {
					r.Ignored = fmt.Sprintf("tools.allowed is replaced by %s (%s scope)", allowedFrom.Path, allowedFrom.Scope)
					m.Shadowed = append(m.Shadowed, r)
					continue
				}
				allowedList = append(allowedList, r)
			case r.Kind == KindAllow:
				allow = append(allow, r)
			case r.Kind == KindAsk:
				ask = append(ask, r)
			case r.Kind == KindDeny && (r.Key == "tools.exclude" || r.V1):
				exclude = append(exclude, r)
			case r.Kind == KindDeny:
				deny = append(deny, r)
			case r.Kind == KindDisabled:
				disabled = append(disabled, r)
			case r.Kind == KindCore:
				if f != coreFrom {
					r.Ignored = fmt.Sprintf("tools.core is replaced by %s (%s scope)", coreFrom.Path, coreFrom.Scope)
					m.Shadowed = append(m.Shadowed, r)
					continue
				}
				m.Core = append(m.Core, r)
			case r.Kind == KindMCPAllowed:
				m.MCPAllowed = append(m.MCPAllowed, r)
			case r.Kind == KindMCPExcluded:
				m.MCPExcluded = append(m.MCPExcluded, r)
			}
		}
	}
	m.Allow = union(allow, allowedList)
	m.Ask = union(ask)
	m.Deny = union(deny, exclude)
	m.Disabled = union(disabled)
	return m
}

// hasList reports whether f sets the list v2Key, directly or through its v1 flat key
// (which counts only when Qwen Code migrates the file).
func hasList(f *File, v2Key, v1Key string) bool {
	return slices.Contains(f.Lists, v2Key) || (f.V1 && slices.Contains(f.Lists, v1Key))
}

func withIgnored(rules []Rule, reason string) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		if r.Ignored == "" {
			r.Ignored = reason
		}
		out[i] = r
	}
	return out
}

// union concatenates the lists and groups entries by Expanded, keeping first-occurrence order.
func union(lists ...[]Rule) []MergedRule {
	var out []MergedRule
	idx := map[string]int{}
	for _, list := range lists {
		for _, r := range list {
			if i, ok := idx[r.Expanded]; ok {
				out[i].Origins = append(out[i].Origins, r)
				continue
			}
			idx[r.Expanded] = len(out)
			out = append(out, MergedRule{Text: r.Expanded, Origins: []Rule{r}})
		}
	}
	return out
}

// Rules returns every entry in effect, each with its own origin, in merge order: the
// origins of Allow, Ask, Deny and Disabled, then Core, MCPAllowed, MCPExcluded, then the
// include/exclude lists of the effective servers. This is the list the audit pairs with tools
// (one row per origin).
func (m *Merged) Rules() []Rule {
	var out []Rule
	for _, list := range [][]MergedRule{m.Allow, m.Ask, m.Deny, m.Disabled} {
		for _, mr := range list {
			out = append(out, mr.Origins...)
		}
	}
	out = append(out, m.Core...)
	out = append(out, m.MCPAllowed...)
	out = append(out, m.MCPExcluded...)
	for _, s := range m.MCPServers {
		out = append(out, s.IncludeTools...)
		out = append(out, s.ExcludeTools...)
	}
	return out
}

// Server returns the effective server with the given key.
func (m *Merged) Server(key string) (MCPServer, bool) {
	for _, s := range m.MCPServers {
		if s.Key == key {
			return s, true
		}
	}
	return MCPServer{}, false
}
