// Package provider is the table of what each model provider (API surface) accepts as a tool
// name, as data: pattern, maximum length and the unit it is counted in, first-character rule,
// reserved names, whether names in the conversation history are validated too, and the error
// text the provider answers with. Each row names its source (a documentation page or a public
// issue quoting the error). A gateway of one's own is described by a profile file of the same
// shape (LoadProfile; docs/providers.md).
//
// The package is pure data and functions over names (lengths in UTF-16 units through mcpname);
// LoadProfile alone reads a file.
package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/jsonpos"
	"github.com/sessionfix/sessionfix/mcpname"
)

// Unit is what a maximum length counts.
type Unit string

// Units of MaxLen.
const (
	UnitUTF16      Unit = "utf16"      // UTF-16 code units (JavaScript .length): an astral character counts 2
	UnitCodePoints Unit = "codepoints" // Unicode code points (JSON Schema maxLength, Smithy @length, Python len)
	UnitBytes      Unit = "bytes"      // UTF-8 bytes
)

// History says whether a provider validates tool names in the conversation history (earlier
// tool calls sent back), not only the declared tools.
type History string

// Values of History.
const (
	HistoryYes     History = "yes"     // documented or seen in a quoted error on a history path
	HistoryNo      History = "no"      // only declared tools are checked
	HistoryUnknown History = "unknown" // not documented and no quoted error; check treats it as "may reject"
)

// Provider is one row of the table (or a profile file). The JSON names are the profile file's.
type Provider struct {
	// ID is the name used on the command line ("openai-chat").
	ID string `json:"id"`
	// Name is the provider and surface for people ("OpenAI Chat Completions").
	Name string `json:"name"`
	// Source is where the rule comes from: a doc URL, or a public issue quoting the error.
	Source string `json:"source"`
	// Pattern is the whole-name regular expression (Go RE2 syntax, anchored by the check: the
	// whole name must match). Empty: no character rule is known.
	Pattern string `json:"pattern,omitempty"`
	// FirstChar is a character class the first character must match ("[A-Za-z]"). Empty: none
	// beyond Pattern.
	FirstChar string `json:"first_char,omitempty"`
	// MaxLen is the maximum length in Unit; 0 means none is known.
	MaxLen int `json:"max_length,omitempty"`
	// Unit is what MaxLen counts; UnitWhy says why that unit was chosen.
	Unit    Unit   `json:"unit,omitempty"`
	UnitWhy string `json:"unit_why,omitempty"`
	// RefMaxLen is a second, shorter limit on a reference to the tool (Anthropic's
	// tool_reference.tool_name, used when a tool is loaded through tool search), in Unit;
	// 0 = none.
	RefMaxLen int `json:"reference_max_length,omitempty"`
	// Reserved are names the provider refuses whatever the pattern says (exact, case-sensitive).
	Reserved []string `json:"reserved,omitempty"`
	// History says whether names in the history are validated.
	History History `json:"history"`
	// HistoryPath is where in a request the history name sits, as the provider's error names it.
	HistoryPath string `json:"history_path,omitempty"`
	// ErrorText is what the provider answers (quoted from the source; "" when none was found).
	ErrorText string `json:"error_text,omitempty"`
	// Verified says whether the rule was checked against the source by the table's author
	// (false: taken from the table, not re-checked).
	Verified bool `json:"verified"`

	re, first *regexp.Regexp
}

// Rule names of a Violation (stable: scripts and SARIF rule ids use them).
const (
	RuleEmpty     = "empty"
	RulePattern   = "pattern"
	RuleFirstChar = "first-char"
	RuleLength    = "length"
	RuleReference = "reference-length"
	RuleReserved  = "reserved"
)

// Violation is one rule of one provider a name breaks.
type Violation struct {
	Provider *Provider `json:"-"`
	// Rule is one of the Rule* names.
	Rule string `json:"rule"`
	// Detail quotes the rule: "does not match ^[a-zA-Z0-9_-]+$", "70 > 64 utf16 units".
	Detail string `json:"detail"`
}

// Length returns the length of a name in unit u. units, when non-nil, are the name's exact
// UTF-16 code units (a stored name with a lone surrogate); name then holds U+FFFD for it.
func Length(name string, units []uint16, u Unit) int {
	switch u {
	case UnitBytes:
		if units != nil {
			n := 0
			for _, r := range utf16.Decode(units) {
				n += utf8.RuneLen(r) // a lone surrogate decodes to U+FFFD: 3 bytes, as in WTF-8
			}
			return n
		}
		return len(name)
	case UnitCodePoints:
		if units != nil {
			return len(utf16.Decode(units))
		}
		return utf8.RuneCountInString(name)
	default:
		if units != nil {
			return len(units)
		}
		return len(mcpname.Units(name))
	}
}

// compile prepares the regular expressions (a profile's are checked by LoadProfile).
func (p *Provider) compile() error {
	if p.Pattern != "" {
		re, err := regexp.Compile(`^(?:` + p.Pattern + `)$`)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", p.Pattern, err)
		}
		p.re = re
	}
	if p.FirstChar != "" {
		re, err := regexp.Compile(`^(?:` + p.FirstChar + `)`)
		if err != nil {
			return fmt.Errorf("first_char %q: %w", p.FirstChar, err)
		}
		p.first = re
	}
	switch p.Unit {
	case UnitUTF16, UnitCodePoints, UnitBytes:
	case "":
		p.Unit = UnitUTF16
	default:
		return fmt.Errorf("unit %q: must be utf16, codepoints or bytes", p.Unit)
	}
	switch p.History {
	case HistoryYes, HistoryNo, HistoryUnknown:
	case "":
		p.History = HistoryUnknown
	default:
		return fmt.Errorf("history %q: must be yes, no or unknown", p.History)
	}
	if p.MaxLen < 0 || p.RefMaxLen < 0 {
		return fmt.Errorf("max_length and reference_max_length must not be negative")
	}
	return nil
}

// Check returns the rules of p that name breaks (nil: accepted). units are the exact UTF-16
// units when the name holds a lone surrogate (else nil).
func (p *Provider) Check(name string, units []uint16) []Violation {
	var out []Violation
	add := func(rule, detail string) { out = append(out, Violation{Provider: p, Rule: rule, Detail: detail}) }
	if name == "" && len(units) == 0 {
		add(RuleEmpty, "the name is empty")
		return out
	}
	lossy := units != nil && strings.ContainsRune(name, utf8.RuneError) // a lone surrogate never matches a character class
	if p.first != nil && (lossy && strings.HasPrefix(name, string(utf8.RuneError)) || !p.first.MatchString(name)) {
		add(RuleFirstChar, fmt.Sprintf("the first character must match %s", p.FirstChar))
	}
	if p.re != nil && (lossy || !p.re.MatchString(name)) {
		add(RulePattern, fmt.Sprintf("does not match %s", p.Pattern))
	}
	n := Length(name, units, p.Unit)
	if p.MaxLen > 0 && n > p.MaxLen {
		add(RuleLength, fmt.Sprintf("%d %s > %d", n, unitLabel(p.Unit), p.MaxLen))
	} else if p.RefMaxLen > 0 && n > p.RefMaxLen {
		add(RuleReference, fmt.Sprintf("%d %s > %d (a tool_reference to it, when the tool is loaded through tool search)", n, unitLabel(p.Unit), p.RefMaxLen))
	}
	if slices.Contains(p.Reserved, name) {
		add(RuleReserved, fmt.Sprintf("%q is a reserved name", name))
	}
	return out
}

func unitLabel(u Unit) string {
	switch u {
	case UnitBytes:
		return "bytes"
	case UnitCodePoints:
		return "code points"
	}
	return "UTF-16 units"
}

// Rule is the provider's whole rule in one line ("^[a-zA-Z0-9_-]+$, at most 64 code points;
// reserved: search").
func (p *Provider) Rule() string {
	var parts []string
	if p.FirstChar != "" {
		parts = append(parts, "first character "+p.FirstChar)
	}
	if p.Pattern != "" {
		parts = append(parts, p.Pattern)
	}
	if p.MaxLen > 0 {
		parts = append(parts, fmt.Sprintf("at most %d %s", p.MaxLen, unitLabel(p.Unit)))
	}
	if p.RefMaxLen > 0 {
		parts = append(parts, fmt.Sprintf("tool_reference at most %d", p.RefMaxLen))
	}
	if len(p.Reserved) > 0 {
		parts = append(parts, "reserved: "+strings.Join(p.Reserved, ", "))
	}
	if len(parts) == 0 {
		return "no rule known"
	}
	return strings.Join(parts, "; ")
}

// LoadProfile reads a profile file: one JSON object with the fields of Provider (id and a
// rule at least). Errors name the file and the reason.
func LoadProfile(path string) (*Provider, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseProfile(path, b)
}

// ParseProfile parses the bytes of a profile file named path (for errors). Unknown members
// are an error, so a misspelt "max_lenght" is not silently ignored. A JSON syntax or type
// error names path:LINE:COL of the bad byte (as --profile and --inventory do).
func ParseProfile(path string, b []byte) (*Provider, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var p Provider
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s%s: %w", path, jsonpos.At(b, err), err)
	}
	if p.ID == "" {
		return nil, fmt.Errorf("%s: \"id\" is missing", path)
	}
	if p.Pattern == "" && p.FirstChar == "" && p.MaxLen == 0 && p.RefMaxLen == 0 && len(p.Reserved) == 0 {
		return nil, fmt.Errorf("%s: no rule: give pattern, first_char, max_length or reserved", path)
	}
	if p.Name == "" {
		p.Name = p.ID
	}
	if p.Source == "" {
		p.Source = path
	}
	if err := p.compile(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// Resolve turns a --provider list into providers: comma-separated table IDs, "all" (every
// row), or paths of profile files (a value containing a path separator or ending in .json).
// Duplicates are dropped; order is the list's (all: the table's).
func Resolve(list string) ([]*Provider, error) {
	var out []*Provider
	seen := map[string]bool{}
	add := func(p *Provider) {
		if !seen[p.ID] {
			seen[p.ID] = true
			out = append(out, p)
		}
	}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
		case v == "all":
			for _, p := range Table() {
				add(p)
			}
		case strings.ContainsRune(v, '/') || strings.HasSuffix(v, ".json"):
			p, err := LoadProfile(v)
			if err != nil {
				return nil, err
			}
			add(p)
		default:
			p := ByID(v)
			if p == nil {
				return nil, fmt.Errorf("unknown provider %q (known: %s, all, or a profile file ./NAME.json)", v, strings.Join(IDs(), ", "))
			}
			add(p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no provider given (known: %s, all, or a profile file ./NAME.json)", strings.Join(IDs(), ", "))
	}
	return out, nil
}
