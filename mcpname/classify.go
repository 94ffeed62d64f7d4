package mcpname

import "sort"

// Class is what a stored tool name is, per naming.md "Classes of a stored name".
type Class string

// The classes of naming.md §4, in the order scan reports them.
const (
	// ClassBuiltin: does not start with "mcp__" (read_file, tool_call, …). Never touched.
	ClassBuiltin Class = "builtin"
	// ClassClean: starts with "mcp__", provider-safe, and of no class below. Never touched.
	ClassClean Class = "clean"
	// ClassLegacyDotted: starts with "mcp__" and is not provider-safe (dots, other characters,
	// over 63 units). Rewritten to NormalizeMcp(name).
	ClassLegacyDotted Class = "legacy-dotted"
	// ClassLegacyTruncated: provider-safe, 63 units, units 28..30 are "___" (the legacy middle
	// truncation shape). Kept byte for byte: its middle cannot be rebuilt.
	ClassLegacyTruncated Class = "legacy-truncated"
	// ClassLegacyTruncatedDotted: the truncation shape with a dot (not provider-safe). Rewritten
	// to NormalizeMcp(name) as Qwen Code's converter does, but no current tool answers to the
	// result; kept instead with --keep-truncated.
	ClassLegacyTruncatedDotted Class = "legacy-truncated-dotted"
	// ClassLossyLegacy: provider-safe, not the registered name of any inventory tool, while
	// exactly one inventory raw identity has it as Legacy(raw). Rewritten only on request.
	ClassLossyLegacy Class = "lossy-legacy"
	// ClassNormalized: ends in "_" + 7 base-36 characters and equals Normalize(raw) for a known
	// raw identity. Never touched.
	ClassNormalized Class = "normalized"
)

// Classes lists every class in report order.
var Classes = []Class{ClassBuiltin, ClassClean, ClassNormalized, ClassLegacyDotted,
	ClassLegacyTruncated, ClassLegacyTruncatedDotted, ClassLossyLegacy}

// Classification is the verdict on one stored name.
type Classification struct {
	Class Class
	// Registered is NormalizeMcp(name): what Qwen Code 0.24.4 sends for it.
	Registered string
	// Owner is the raw identity the name belongs to, when an Index resolves it (lossy-legacy,
	// normalized, or a truncated name that is the legacy spelling of exactly one known tool).
	Owner string
	// OwnerRegistered is Normalize(Owner) when Owner is set.
	OwnerRegistered string
	// Ambiguous counts the known raw identities whose legacy spelling is this name, when more
	// than one (the name cannot be attributed).
	Ambiguous int
}

// Index holds known raw identities (from an inventory or inferred) and their registered and
// legacy spellings. The zero value and nil are an empty index. Not safe for concurrent writes;
// safe for concurrent reads once built.
type Index struct {
	parent     *Index // consulted first; never modified through this index
	raws       map[string]bool
	registered map[string][]string // registered name -> raw identities
	legacy     map[string][]string // legacy name -> raw identities
}

// NewIndex builds an Index over raw identities ("mcp__<server>__<tool>").
func NewIndex(raws ...string) *Index {
	ix := &Index{raws: map[string]bool{}, registered: map[string][]string{}, legacy: map[string][]string{}}
	for _, r := range raws {
		ix.Add(r)
	}
	return ix
}

// Extend returns a new index holding ix's raw identities plus raws. ix is shared, not copied
// (cheap for a large inventory) and must not be modified afterwards.
func (ix *Index) Extend(raws ...string) *Index {
	out := &Index{parent: ix, raws: map[string]bool{}, registered: map[string][]string{}, legacy: map[string][]string{}}
	for _, r := range raws {
		out.Add(r)
	}
	return out
}

// has reports whether raw is known here or in a parent.
func (ix *Index) has(raw string) bool {
	for ; ix != nil; ix = ix.parent {
		if ix.raws[raw] {
			return true
		}
	}
	return false
}

// Add records one raw identity; adding one twice has no effect.
func (ix *Index) Add(raw string) {
	if ix.has(raw) {
		return
	}
	ix.raws[raw] = true
	reg := Normalize(raw)
	ix.registered[reg] = appendSorted(ix.registered[reg], raw)
	leg := Legacy(raw)
	ix.legacy[leg] = appendSorted(ix.legacy[leg], raw)
}

// Len returns the number of raw identities.
func (ix *Index) Len() int {
	n := 0
	for ; ix != nil; ix = ix.parent {
		n += len(ix.raws)
	}
	return n
}

// Raws returns the raw identities, sorted.
func (ix *Index) Raws() []string {
	var out []string
	for ; ix != nil; ix = ix.parent {
		for r := range ix.raws {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// RegisteredBy returns the raw identities whose registered name is name (sorted).
func (ix *Index) RegisteredBy(name string) []string {
	return ix.lookup(name, func(x *Index) map[string][]string { return x.registered })
}

// LegacyOf returns the raw identities whose legacy spelling is name (sorted).
func (ix *Index) LegacyOf(name string) []string {
	return ix.lookup(name, func(x *Index) map[string][]string { return x.legacy })
}

func (ix *Index) lookup(name string, m func(*Index) map[string][]string) []string {
	if ix == nil {
		return nil
	}
	if ix.parent == nil {
		return m(ix)[name]
	}
	var out []string
	for x := ix; x != nil; x = x.parent {
		out = append(out, m(x)[name]...)
	}
	sort.Strings(out)
	return out
}

func appendSorted(list []string, s string) []string {
	list = append(list, s)
	sort.Strings(list)
	return list
}

// IsTruncationShape reports whether name has the legacy middle-truncation shape: exactly 63
// UTF-16 units with "___" at units 28..30, and only characters Legacy emits ([A-Za-z0-9_.-]).
func IsTruncationShape(name string) bool {
	if len(name) != MaxLength || name[LegacyHeadLength:LegacyHeadLength+len(LegacyJoiner)] != LegacyJoiner {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isLegacyChar(uint16(name[i])) {
			return false
		}
	}
	return true
}

// HasHashSuffix reports whether name ends in "_" + 7 lower-case base-36 characters, the shape
// Normalize gives every name it changes.
func HasHashSuffix(name string) bool {
	n := len(name)
	if n < HashLength+1 || name[n-HashLength-1] != '_' {
		return false
	}
	for i := n - HashLength; i < n; i++ {
		c := name[i]
		if !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// Classify returns the class of a stored name (naming.md §4). ix may be nil; without known raw
// identities the classes lossy-legacy and normalized cannot be told and such names are clean.
// The rules, in order:
//  1. no "mcp__" prefix: builtin;
//  2. not provider-safe: legacy-truncated-dotted when IsTruncationShape, else legacy-dotted;
//  3. the registered name of a known raw identity: normalized when it carries a hash suffix
//     and differs from the raw identity, else clean;
//  4. IsTruncationShape: legacy-truncated (Owner set when exactly one known tool has it as
//     its legacy spelling);
//  5. the legacy spelling of exactly one known raw identity: lossy-legacy;
//  6. otherwise clean (Ambiguous > 1 when several known tools share this legacy spelling).
func Classify(name string, ix *Index) Classification {
	c := Classification{Registered: NormalizeMcp(name)}
	if !HasPrefix(name) {
		c.Class = ClassBuiltin
		return c
	}
	if !IsProviderSafe(name) {
		if IsTruncationShape(name) {
			c.Class = ClassLegacyTruncatedDotted
		} else {
			c.Class = ClassLegacyDotted
		}
		if owners := ix.LegacyOf(name); len(owners) == 1 {
			c.Owner, c.OwnerRegistered = owners[0], Normalize(owners[0])
		} else if len(owners) > 1 {
			c.Ambiguous = len(owners)
		}
		return c
	}
	if regs := ix.RegisteredBy(name); len(regs) > 0 {
		c.Class = ClassClean
		if HasHashSuffix(name) && regs[0] != name {
			c.Class = ClassNormalized
		}
		if len(regs) == 1 {
			c.Owner, c.OwnerRegistered = regs[0], name
		} else {
			c.Ambiguous = len(regs)
		}
		return c
	}
	owners := ix.LegacyOf(name)
	if len(owners) == 1 {
		c.Owner, c.OwnerRegistered = owners[0], Normalize(owners[0])
	} else if len(owners) > 1 {
		c.Ambiguous = len(owners)
	}
	switch {
	case IsTruncationShape(name):
		c.Class = ClassLegacyTruncated
	case len(owners) == 1:
		c.Class = ClassLossyLegacy
	default:
		c.Class = ClassClean
	}
	return c
}

// ClassifyUnits is Classify over UTF-16 code units. Units holding a lone surrogate (possible in
// a JSON "\ud800" escape, not in a Go string) are never provider-safe: such a name is classified
// legacy-dotted (or builtin without the prefix) and its Registered name hashes the exact units.
func ClassifyUnits(u []uint16, ix *Index) Classification {
	if !hasLoneSurrogate(u) {
		return Classify(String(u), ix)
	}
	c := Classification{Registered: NormalizeMcpUnits(u), Class: ClassBuiltin}
	if HasPrefixUnits(u) {
		c.Class = ClassLegacyDotted
	}
	return c
}

func hasLoneSurrogate(u []uint16) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 0xd800 && c < 0xdc00:
			if i+1 >= len(u) || u[i+1] < 0xdc00 || u[i+1] > 0xdfff {
				return true
			}
			i++
		case c >= 0xdc00 && c <= 0xdfff:
			return true
		}
	}
	return false
}

// Reasons a name is not provider-safe (RejectReasons), in report order.
const (
	ReasonDot      = "dotted"    // holds '.'
	ReasonNonASCII = "non-ascii" // holds a character above U+007F (or a lone surrogate)
	ReasonSpace    = "space"     // holds a space or other ASCII control/blank
	ReasonSymbol   = "symbol"    // holds another ASCII character outside [A-Za-z0-9_-] ('/', ':', '@', …)
	ReasonLong     = "over-long" // longer than MaxLength (63) UTF-16 units
	ReasonStart    = "bad-start" // does not start with an ASCII letter
)

// RejectReasons says why a provider rejects name (IsProviderSafe's rule,
// ^[A-Za-z][A-Za-z0-9_-]*$ and at most 63 UTF-16 units): the Reason* values that apply, each
// once, in the order of the constants; nil for a provider-safe name. Reports use it to name a
// legacy-dotted name by its actual defect ("legacy-non-ascii", "legacy-dotted+over-long").
func RejectReasons(name string) []string {
	var buf [128]uint16 // the units of a usual name, on the stack (summaries call this per site)
	return RejectReasonsUnits(appendUnits(buf[:0], name))
}

// RejectReasonsUnits is RejectReasons over UTF-16 code units.
func RejectReasonsUnits(u []uint16) []string {
	if IsProviderSafeUnits(u) {
		return nil
	}
	var dot, nonASCII, space, symbol bool
	for _, c := range u {
		switch {
		case isProviderChar(c):
		case c == '.':
			dot = true
		case c > 0x7f:
			nonASCII = true
		case c <= ' ' || c == 0x7f:
			space = true
		default:
			symbol = true
		}
	}
	var out []string
	for _, r := range []struct {
		on bool
		s  string
	}{{dot, ReasonDot}, {nonASCII, ReasonNonASCII}, {space, ReasonSpace}, {symbol, ReasonSymbol},
		{len(u) > MaxLength, ReasonLong}, {len(u) == 0 || u[0] > 0x7f || !isLetter(byte(u[0])), ReasonStart}} {
		if r.on {
			out = append(out, r.s)
		}
	}
	return out
}
