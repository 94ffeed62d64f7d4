package mcpname

import "sync"

// memoMinLen is the input length (bytes) from which the string functions below remember their
// last results. Audit evaluates every rule against every tool, and each evaluation derives the
// same spellings of the tool's name (Normalize, Legacy, …) again; for a name of 40 MiB that
// was 48 rules × several UTF-16 conversions of 40 MiB — minutes and most of a gigabyte
// (issue 9, finding 11). Short names are cheaper to recompute than to look up.
const memoMinLen = 4 << 10

// memoSlots is how many recent long inputs each function remembers.
const memoSlots = 4

// memo remembers the results of one pure string function for its last memoSlots long inputs.
// Safe for concurrent use.
type memo struct {
	mu   sync.Mutex
	next int
	in   [memoSlots]string
	out  [memoSlots]string
	used [memoSlots]bool
}

// get returns f(s), from memory when s is one of the last long inputs.
func (m *memo) get(s string, f func(string) string) string {
	if len(s) < memoMinLen {
		return f(s)
	}
	m.mu.Lock()
	for i := range m.in {
		if m.used[i] && len(m.in[i]) == len(s) && m.in[i] == s {
			out := m.out[i]
			m.mu.Unlock()
			return out
		}
	}
	m.mu.Unlock()
	out := f(s)
	m.mu.Lock()
	m.in[m.next], m.out[m.next], m.used[m.next] = s, out, true
	m.next = (m.next + 1) % memoSlots
	m.mu.Unlock()
	return out
}

var normalizeMemo, legacyMemo, legacySubMemo, providerSubMemo memo
