package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/sessionfix/sessionfix/internal/owner"
)

// Agent is the part of a subagent file (.qwen/agents/<name>.md) that concerns tool names.
type Agent struct {
	Path string `json:"path"`
	// Name is the front matter "name" (required by Qwen Code).
	Name string `json:"name"`
	// DisallowedTools are the blocklist rules (Kind KindDisallowed, Key "disallowedTools",
	// Scope ScopeAgent). Front matter is not environment-expanded: Expanded == Literal.
	DisallowedTools []Rule `json:"disallowedTools"`
	// MCPServers are the keys of the agent-local mcpServers mapping: servers visible only to
	// this subagent, shadowing session servers of the same key.
	MCPServers []string  `json:"mcpServers,omitempty"`
	Warnings   []Warning `json:"warnings,omitempty"`
}

// frontMatterPattern is Qwen Code's split (subagent-manager.ts parseSubagentContent), applied
// after line ends are normalized to LF and a BOM is dropped.
var frontMatterPattern = regexp.MustCompile(`^---\n([\s\S]*?)\n---\n([\s\S]*)$`)

// LoadAgent reads one subagent file. See ParseAgent.
func LoadAgent(path string) (*Agent, error) {
	data, _, err := owner.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read agent %s: %w", path, err)
	}
	return ParseAgent(path, data)
}

// utf8BOM is the UTF-8 byte order mark a front matter file may start with.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseAgent parses a subagent file the way Qwen Code's parseSubagentContent does
// (qwen-reference.md §2.7; agent-frontmatter-schema.ts):
//
//   - the file must start with a "---" line and have a closing "---" line followed by a line
//     end, else ErrFrontMatter;
//   - the front matter must be a YAML mapping with non-empty "name" and "description"
//     (Qwen Code does not load the agent otherwise), else ErrFrontMatter;
//   - disallowedTools is either a sequence (string items kept; other items are dropped with a
//     Warning, as Qwen Code filters them) or a string split on "," with items trimmed and
//     empty items dropped;
//   - mcpServers, when a mapping, contributes its keys.
//
// A YAML syntax error is reported as a *ParseError with the file line (Qwen Code may still
// load such a file through its lenient line parser; we do not guess). Positions in the
// returned rules refer to the original bytes (BOM and CR included).
func ParseAgent(path string, data []byte) (*Agent, error) {
	bom := 0
	if bytes.HasPrefix(data, utf8BOM) {
		bom = len(utf8BOM)
	}
	norm := strings.ReplaceAll(string(data[bom:]), "\r\n", "\n")
	fail := func(line int, reason string, cause error) error {
		return &ParseError{Path: path, Line: line, Column: 1, Reason: reason, Err: cause}
	}
	m := frontMatterPattern.FindStringSubmatch(norm)
	if m == nil {
		return nil, fail(1, `missing YAML front matter ("---" line, YAML, closing "---" line)`, ErrFrontMatter)
	}
	const fmFirstLine = 2 // the YAML starts on the line after the opening "---"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(m[1]), &doc); err != nil {
		line, reason := yamlErrorLine(err)
		return nil, fail(line+fmFirstLine-1, "front matter: "+reason, fmt.Errorf("%w: %w", ErrFrontMatter, err))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fail(fmFirstLine, "front matter is not a YAML mapping", ErrFrontMatter)
	}
	root := doc.Content[0]
	ap := agentParser{path: path, data: data, bom: bom, lines: splitLines(data), lineOffset: fmFirstLine - 1}
	a := &Agent{Path: path}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if seen[k.Value] {
			a.Warnings = append(a.Warnings, ap.warning(k,
				fmt.Sprintf("front matter key %q appears more than once; the last one is used", k.Value)))
		}
		seen[k.Value] = true
	}

	name := ap.value(root, "name")
	desc := ap.value(root, "description")
	if name == nil || scalarEmpty(name) {
		return nil, fail(fmFirstLine, `front matter has no "name"; Qwen Code does not load this agent`, ErrFrontMatter)
	}
	if desc == nil || scalarEmpty(desc) {
		return nil, fail(fmFirstLine, `front matter has no "description"; Qwen Code does not load this agent`, ErrFrontMatter)
	}
	a.Name = name.Value

	if v := ap.value(root, "disallowedTools"); v != nil {
		a.DisallowedTools = ap.disallowed(v, &a.Warnings)
	}
	if v := ap.value(root, "mcpServers"); v != nil {
		if v.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(v.Content); i += 2 {
				a.MCPServers = append(a.MCPServers, v.Content[i].Value)
			}
		} else {
			a.Warnings = append(a.Warnings, ap.warning(v, "mcpServers: not a mapping; Qwen Code drops it"))
		}
	}
	return a, nil
}

// LoadAgentsDir loads every *.md file directly in dir, sorted by name. A missing directory
// yields no agents and no error. A file that fails is reported and the others are loaded.
func LoadAgentsDir(dir string) ([]*Agent, []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("read agents directory %s: %w", dir, err)}
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var agents []*Agent
	var errs []error
	for _, n := range names {
		a, err := LoadAgent(filepath.Join(dir, n))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		agents = append(agents, a)
	}
	return agents, errs
}

// AgentDirs returns the subagent directories Qwen Code reads, project level first:
// <ProjectDir>/.qwen/agents (left out when ProjectDir is empty or is the home directory, as
// SubagentManager.listSubagentsAtLevel does) and <GlobalDir>/agents.
func AgentDirs(opts DiscoverOptions) []string {
	var out []string
	if opts.ProjectDir != "" {
		project := resolvePath(opts.ProjectDir, opts)
		if opts.Home == "" || realPath(project) != realPath(opts.Home) {
			out = append(out, filepath.Join(project, ".qwen", "agents"))
		}
	}
	return append(out, filepath.Join(GlobalDir(opts), "agents"))
}

var (
	yamlLinePattern = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	// yamlParserProblem matches the problems yaml.v3's parser (not its scanner) reports. For
	// those, yaml.v3 prints the 0-based line of the construct being parsed; scanner and
	// decoder errors carry 1-based lines.
	yamlParserProblem = regexp.MustCompile(`^did not find expected (<document start>|node content|key|'-' indicator|',' or '\]'|',' or '\}')$`)
)

// yamlErrorLine extracts the 1-based line of a yaml.v3 error, relative to the YAML text.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	if m := yamlLinePattern.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if yamlParserProblem.MatchString(m[2]) {
			n++
		}
		return max(n, 1), m[2]
	}
	return 1, strings.TrimPrefix(msg, "yaml: ")
}

func scalarEmpty(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Value == "" || n.Tag == "!!null")
}

type agentParser struct {
	path       string
	data       []byte
	bom        int
	lines      []int // start offset of each original line
	lineOffset int   // file line = YAML line + lineOffset
}

func splitLines(data []byte) []int {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// value returns the node of the last key named name in mapping n (yaml.v3 does not reject
// duplicate keys when decoding into a Node; ParseAgent warns about them).
func (ap *agentParser) value(n *yaml.Node, name string) *yaml.Node {
	var v *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			v = n.Content[i+1]
		}
	}
	return v
}

// offset converts a yaml.v3 position (YAML-relative line, 1-based column in characters) into
// a byte offset in the original file and a 1-based byte column.
func (ap *agentParser) offset(line, col int) (off, fileLine, byteCol int) {
	fileLine = line + ap.lineOffset
	if fileLine-1 >= len(ap.lines) {
		return len(ap.data), fileLine, 1
	}
	start := ap.lines[fileLine-1]
	if fileLine == 1 {
		start += ap.bom
	}
	off = start
	for i := 1; i < col && off < len(ap.data); i++ {
		_, size := utf8.DecodeRune(ap.data[off:])
		off += size
	}
	return off, fileLine, off - ap.lines[fileLine-1] + 1
}

func (ap *agentParser) warning(n *yaml.Node, msg string) Warning {
	_, line, col := ap.offset(n.Line, n.Column)
	return Warning{Path: ap.path, Line: line, Column: col, Message: msg}
}

// scalarOrigin locates a scalar node; End covers the scalar's source bytes when it is a
// single-line plain or quoted scalar whose text appears verbatim, else End == Offset.
func (ap *agentParser) scalarOrigin(n *yaml.Node, index int) Origin {
	off, line, col := ap.offset(n.Line, n.Column)
	end := off
	v := n.Value
	switch {
	case n.Style == 0 && bytes.HasPrefix(ap.data[off:], []byte(v)):
		end = off + len(v)
	case (n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle) &&
		bytes.HasPrefix(ap.data[min(off+1, len(ap.data)):], []byte(v)) && off+1+len(v) < len(ap.data):
		end = off + len(v) + 2
	}
	return Origin{File: ap.path, Scope: ScopeAgent, Key: "disallowedTools", Index: index,
		Offset: off, End: end, Line: line, Column: col}
}

func (ap *agentParser) disallowed(v *yaml.Node, warnings *[]Warning) []Rule {
	var out []Rule
	add := func(o Origin, s string) {
		out = append(out, Rule{Origin: o, Kind: KindDisallowed, Literal: s, Expanded: s})
	}
	switch {
	case v.Kind == yaml.SequenceNode:
		for i, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
				*warnings = append(*warnings, ap.warning(item,
					fmt.Sprintf("disallowedTools[%d]: not a string; Qwen Code drops it", i)))
				continue
			}
			add(ap.scalarOrigin(item, i), item.Value)
		}
	case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
		base := ap.scalarOrigin(v, 0)
		search := base.Offset
		i := 0
		for _, part := range strings.Split(v.Value, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			o := base
			o.Index = i
			o.End = o.Offset
			// Locate the item on the scalar's line when it is written verbatim there.
			lineEnd := bytes.IndexByte(ap.data[search:], '\n')
			if lineEnd < 0 {
				lineEnd = len(ap.data) - search
			}
			if j := bytes.Index(ap.data[search:search+lineEnd], []byte(part)); j >= 0 {
				o.Offset = search + j
				o.End = o.Offset + len(part)
				o.Column = base.Column + (o.Offset - base.Offset)
				search = o.End
			}
			add(o, part)
			i++
		}
	default:
		*warnings = append(*warnings, ap.warning(v, "disallowedTools: neither a list nor a string; Qwen Code drops it"))
	}
	return out
}
