// Package helptext is what --help says about the agents: the phrases, roots and examples of
// every room's agent.Help spliced into the commands' descriptions and flag usages, in
// agent/all's order with the default agent (all.Default) first, and the descriptions built
// from them (scan, fix, names, audit). The flags themselves are the command's.
package helptext

import (
	"fmt"
	"path"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/reports"
)

// Default is the default agent's Help (an empty one when it has none).
func Default() agent.Help {
	if all.HelpOf(all.Default) != nil {
		return *all.HelpOf(all.Default)
	}
	return agent.Help{}
}

// helpPhrases returns field's non-empty value of every helpAgents agent.
func helpPhrases(field func(*agent.Help) string) []string {
	var out []string
	for _, a := range all.WithHelp() {
		if s := field(all.HelpOf(a)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Roots is scan's "default: every agent's place that exists, … — <agent>: <its roots>; …"
// (issue 23 item 4: without a PATH every agent whose default place exists is covered).
func Roots() string {
	var parts []string
	for _, a := range all.WithHelp() {
		if all.HelpOf(a).Roots != "" {
			parts = append(parts, a.Core().Name+": "+all.HelpOf(a).Roots)
		}
	}
	return "default: every agent's place that exists, --agent ID one agent's — " + strings.Join(parts, "; ")
}

// storesHelp lists the agents' stores for scan ("session files, … and Acme transcripts").
func storesHelp() string {
	return reports.AndList(helpPhrases(func(h *agent.Help) string { return h.Stores }))
}

// homesHelp lists what a PATH naming an agent's home is, each followed by ", ".
func homesHelp() string {
	var b strings.Builder
	for _, s := range helpPhrases(func(h *agent.Help) string { return h.Home }) {
		b.WriteString(s + ", ")
	}
	return b.String()
}

// settingsDirHelp is the default agent's settings directory under a PATH ("PATH/.acme").
func settingsDirHelp() string {
	return "PATH/" + path.Base(Default().Dir)
}

// linkHelp is scan's linked-directory example ("~/.acme -> /data/acme").
func linkHelp() string {
	return Default().Dir + " -> /data/" + string(all.Default.Core().ID)
}

// ExampleLine is one EXAMPLES line of command cmd ("   sessionfix fix ARGS   # COMMENT"; the
// comments start at column 52, or one space after ARGS of 34 characters or more: run as a
// shell line, "ARGS# …" would be one word).
func ExampleLine(cmd string, e agent.Example) string {
	if e.Comment == "" {
		return strings.TrimRight("   sessionfix "+cmd+" "+e.Args, " ")
	}
	args := fmt.Sprintf("%-34s", e.Args)
	if !strings.HasSuffix(args, " ") {
		args += " "
	}
	return fmt.Sprintf("   sessionfix %s %s# %s", cmd, args, e.Comment)
}

// Examples are command cmd's example lines: the generic ones, the agents' own (picked by
// field) spliced in at index at.
func Examples(cmd string, generic []agent.Example, at int, field func(*agent.Help) []agent.Example) string {
	var own []agent.Example
	for _, a := range all.WithHelp() {
		own = append(own, field(all.HelpOf(a))...)
	}
	lines := make([]string, 0, len(generic)+len(own))
	for i, e := range generic {
		if i == at {
			for _, o := range own {
				lines = append(lines, ExampleLine(cmd, o))
			}
		}
		lines = append(lines, ExampleLine(cmd, e))
	}
	if at >= len(generic) {
		for _, o := range own {
			lines = append(lines, ExampleLine(cmd, o))
		}
	}
	return strings.Join(lines, "\n")
}

// ScanDescription is scan's --help description.
func ScanDescription() string {
	h := Default()
	return `Walks the given paths (` + Roots() + `) in parallel and reports every tool name
found in ` + storesHelp() + `: counts per class and per
store, and the old → new map a fix would apply. Names a provider rejects that cannot be
rewritten are counted in a closing line ("N names a provider rejects were kept: why, how to
fix"); --fail-on kept makes such a run exit 5, for scheduled jobs. --baseline FILE (a previous
scan --format sarif output) exits 5 only when a finding (a name fix would rewrite, or a kept
name a provider rejects) is not in it: same class, name, store and row; the line may change. A PATH may be a runtime
directory, ` + homesHelp() + `a project's chats/ directory or one
file. Settings files (PATH/settings.json, ` + settingsDirHelp() + `/settings.json, or a PATH named
settings.json) are read too: their rules written in legacy spellings are listed with
file:line:col; settings are never rewritten ("sessionfix audit" says what each rule matches now).
Above 20 stores the text output is a summary (stores per agent and kind, the 20 largest, old →
new counts, kept names and why); -v lists every store, --format json always does.
A PATH that is a symbolic link to a directory (` + linkHelp() + `) is followed, with a
note; links inside the tree are not. A PATH that does not exist, or no default directory, is
an error naming it (and the variables tried), exit 1, when nothing at all could be read; a
directory without a store says so. Problems and warnings go to standard error, the report to
standard output (--format json also lists them under "problems").
Never writes anything.

EXAMPLES:
` + Examples("scan", []agent.Example{
		{},
		{Args: h.Chats},
		{Args: "--format json " + h.Dir + " > scan.json"},
		{Args: "--format sarif " + h.Dir + " > scan.sarif"},
		{Args: "--baseline scan.sarif " + h.Dir},
	}, 2, func(h *agent.Help) []agent.Example { return h.Scan })
}

// InventoryUsage is --inventory's usage.
func InventoryUsage() string {
	u := "JSON inventory of MCP tools (raw identities; docs/inventory.md) to recognise lossy and normalized names"
	for _, s := range helpPhrases(func(h *agent.Help) string { return h.Inventory }) {
		u += ", and " + s
	}
	return u
}

// DiscoverUsage is --discover's usage (the first agent's agent.Help.Discover).
func DiscoverUsage() string {
	if d := helpPhrases(func(h *agent.Help) string { return h.Discover }); len(d) > 0 {
		return d[0]
	}
	return "start the MCP servers of the agents' configs and list their tools"
}

// agentRewrites are the rewrite paragraphs of every agent but the default one (whose
// paragraph opens fix's rewrite paragraph), each after a blank line.
func agentRewrites() string {
	var b strings.Builder
	for _, a := range all.WithHelp() {
		if a != all.Default && all.HelpOf(a).Rewrite != "" {
			b.WriteString("\n\n" + all.HelpOf(a).Rewrite)
		}
	}
	return b.String()
}

// CheckSentences are the agents' sentences of check's description, each after a space.
func CheckSentences() string {
	var b strings.Builder
	for _, s := range helpPhrases(func(h *agent.Help) string { return h.Check }) {
		b.WriteString(" " + s)
	}
	return b.String()
}

// keptHelp lists the agents' kept names for fix's list of kept names, each followed by ", ".
func keptHelp() string {
	var b strings.Builder
	for _, s := range helpPhrases(func(h *agent.Help) string { return h.Kept }) {
		b.WriteString(s + ", ")
	}
	return b.String()
}

// Mtime says which agents sort their sessions by mtime ("Acme sorts\nsessions by mtime").
func Mtime() string {
	var names []string
	for _, a := range all.WithHelp() {
		if all.HelpOf(a).SortsByMtime {
			names = append(names, a.Core().Name)
		}
	}
	verb := " sorts"
	if len(names) != 1 {
		verb = " sort"
	}
	return reports.AndList(names) + verb + "\nsessions by mtime"
}

// FixDescription is fix's --help description (fix --rules' part follows it).
func FixDescription() string {
	h := Default()
	return `Plans the rewrite of every legacy tool name found (same discovery as scan) and prints
the plan: per store, where, which site, old → new and the class. Above 20 stores the text
output ends with a summary (stores per agent and kind, the 20 largest, old → new counts, kept
names and why) and lists the plans only when at most 20 stores have one; -v lists every
store's plan, --format json always has it. Nothing is written unless --apply is given
(--dry-run or -n says the default explicitly; it contradicts --apply); a non-interactive run
also needs --yes, and --yes without --apply is noted as a dry run.

` + Default().Rewrite + ` Provider-safe names, including middle-truncated legacy names, stay byte for byte. A call
and its response always end with the same name. Only the bytes of each rewritten name change:
key order, spacing, escapes, line endings, a BOM and a missing final newline are kept.` + agentRewrites() + `

Names a provider rejects that are kept (` + keptHelp() + `a dotted name kept by
--keep-truncated, a name in a file that must not be written) are counted in a line after the
summary: "N names a provider rejects were kept: why, how to fix". With --fail-on kept such a
run exits 5 (after 3 and 4, which win), so a scheduled job can tell "all clean" from "broken
session left as is".

With --apply each changed file is written to a temp file beside it, fsynced, checked not to have
changed meanwhile (size, mtime, content hash: a file an agent is appending to is skipped and
reported "in use"), renamed over the original with its mode and mtime kept (` + Mtime() + `). Its original is kept first in the run's backup directory (--state-dir,
default ${XDG_STATE_HOME:-~/.local/state}/sessionfix/runs/<run-id>/) with manifest.json: as a
hard link to the original inode when the state directory is on the same file system (no
copy, no extra space), else as a copy. "sessionfix undo" restores a run byte for byte.
A process that opens a session for writing while it is rewritten is seen (Linux /proc): the
rename is rolled back and the session refused (exit 4); bytes appended during the rename are
carried over (exit 4, "rewritten, but"). Temp files of killed runs are removed first.
Problems, warnings and stores skipped or refused are written to standard error; the plan to
standard output (with --format json also as members). Missing PATHs: as for scan.

The plan is data (docs/plan.md): --plan-out FILE writes the dry run's plan with each store's
fingerprint (size, mtime, content checksum, name sites); --apply --plan FILE applies exactly that
plan, with the naming options it records: a store that changed since it was planned is refused
(exit 4, named on standard error), a store that now plans to other edits is refused (exit 3),
every other store is rewritten as planned. The interactive [y/N] apply applies the plan it
showed, the same way. A plan file is untrusted input: a malformed or edited one is refused
before anything is read.

EXAMPLES:
` + Examples("fix", []agent.Example{
		{Comment: "dry-run over " + h.Dir},
		{Args: "-n " + h.Dir, Comment: "the same, said explicitly"},
		{Args: "--apply --yes " + h.Dir, Comment: "rewrite, with backups"},
		{Args: "--keep-truncated --apply --yes " + h.Chats},
		{Args: "--format json > plan.json"},
		{Args: "--plan-out plan.json " + h.Dir, Comment: "review it, then:"},
		{Args: "--apply --yes --plan plan.json", Comment: "apply exactly that plan"},
	}, 7, func(h *agent.Help) []agent.Example { return h.Fix })
}

// AgentNames lists every agent sessionfix knows by its display name, in agent/all's order,
// joined by ", ".
func AgentNames() string {
	var out []string
	for _, a := range all.Agents {
		out = append(out, a.Core().Name)
	}
	return strings.Join(out, ", ")
}

// NamesDescription is the names command's --help description: what the columns are comes
// from the default agent's Help.Names (whose naming functions they show), its examples after
// the generic ones from Help.NamesExamples.
func NamesDescription() string {
	return `For support engineers: for each name, its class (docs/naming.md) and what ` + Default().Names + `.

Names come as arguments or, with --stdin, one per line on standard input. With --json each
input line is a JSON string (or an object with a "raw" key), so any name can be given:
control characters, lone surrogates ("\ud800"), newlines.

EXAMPLES:
   sessionfix names mcp__lit__literature.search_pubmed
   printf 'mcp__foo.bar__deploy.prod\nread_file\n' | sessionfix names --stdin
` + Examples("names", nil, 0, func(h *agent.Help) []agent.Example { return h.NamesExamples })
}

// AuditDescription is audit --help's description: the default agent's part
// (agent.Audit.Description) first, then every other agent's in list order.
func AuditDescription() string {
	b := strings.Builder{}
	b.WriteString(all.AuditOf(all.Default).Description)
	for _, a := range all.Auditors() {
		if a != all.Default {
			b.WriteString(all.AuditOf(a).Description)
		}
	}
	return b.String()
}
