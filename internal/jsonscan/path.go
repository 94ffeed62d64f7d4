package jsonscan

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Elem is one step of a JSON path: an object key (Index < 0) or an array index (Key "").
type Elem struct {
	Key   string
	Index int
}

// Path is the location of a value inside one JSON document, from the root.
type Path []Elem

// String renders the path as "message.parts[2].functionCall.name" (keys that are not plain
// identifiers are written as ["key"]).
func (p Path) String() string { return string(p.AppendText(nil)) }

// AppendText appends the String form of p to b (no allocation when b has room).
func (p Path) AppendText(b []byte) []byte {
	for i, e := range p {
		if e.Index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.Index), 10)
			b = append(b, ']')
			continue
		}
		if isIdent(e.Key) {
			if i > 0 {
				b = append(b, '.')
			}
			b = append(b, e.Key...)
		} else {
			b = append(b, '[')
			b = strconv.AppendQuote(b, e.Key)
			b = append(b, ']')
		}
	}
	return b
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// Prefix returns the first n elements of p.
func (p Path) Prefix(n int) Path {
	if n > len(p) {
		n = len(p)
	}
	return p[:n]
}

// Equal reports whether p and q are the same path.
func (p Path) Equal(q Path) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// Patterns is a compiled set of path patterns. A pattern is written as dot-separated steps:
//
//	key       an object member with that exact key
//	[*]       any element of an array
//	*         any member of an object (its value)
//	{}        the keys of an object (the key strings themselves are captured)
//
// A leading "[*]" addresses a root array. Examples: "message.parts[*].functionCall.name",
// "tools.byName.{}", "[*].parts[*].functionResponse.name". Only string values (or keys) at a
// matching path are captured; other values there are ignored.
type Patterns struct {
	root *node
	n    int
	// lits[i] are the literal keys of pattern i (for SetPrefilter's coverage check).
	lits [][]string
}

type node struct {
	label  string // the key of the edge leading here ("" for [*], * and the root)
	keys   map[string]*node
	lits   []*node      // the same children as keys, for a fast linear lookup
	labels []string     // labels[i] is lits[i].label: compared without loading each child node
	words  []labelWords // words[i] are labels[i]'s bytes as words (labelWordsOf)
	wants  bool         // wantsKeys, kept up to date by add (read for every member of a record)
	// lens has bit min(len(k), 63) set for every literal key k of keys: a member key of a
	// length no literal key has is none of them, found with one bit test (most keys of a
	// record are not followed, and their lengths rarely match).
	lens uint64
	// ktab finds a literal key of up to 16 bytes by its words in one probe (keySlot): ktab[slot]
	// is 1 + the index in lits of the one literal key in that slot, 0 for none (a key over 16
	// bytes has no slot: no key looked up here is that long). ktabOK says no two literal keys of
	// up to 16 bytes share a slot under kseed (else childKey's loop).
	ktab     [16]uint8
	kseed    uint64
	ktabOK   bool
	anyElem  *node
	anyKey   *node
	capture  int // pattern id capturing a string value here, or -1
	keyCapID int // pattern id capturing the keys of an object here, or -1
}

func newNode() *node { return &node{capture: -1, keyCapID: -1} }

// Compile builds a pattern set; pattern i is reported as Capture.Pattern == i.
func Compile(patterns ...string) (*Patterns, error) {
	p := &Patterns{root: newNode(), lits: make([][]string, len(patterns))}
	for id, pat := range patterns {
		if err := p.add(id, pat); err != nil {
			return nil, err
		}
	}
	p.n = len(patterns)
	return p, nil
}

// MustCompile is Compile that panics on a malformed pattern (for package-level tables).
func MustCompile(patterns ...string) *Patterns {
	p, err := Compile(patterns...)
	if err != nil {
		panic(err)
	}
	return p
}

func (p *Patterns) add(id int, pat string) error {
	steps, err := splitPattern(pat)
	if err != nil {
		return fmt.Errorf("compile pattern %q: %w", pat, err)
	}
	n := p.root
	for i, s := range steps {
		last := i == len(steps)-1
		switch s {
		case "[*]":
			if n.anyElem == nil {
				n.anyElem = newNode()
			}
			n = n.anyElem
		case "*":
			if n.anyKey == nil {
				n.anyKey = newNode()
			}
			n.wants = true
			n = n.anyKey
		case "{}":
			if !last {
				return fmt.Errorf("compile pattern %q: {} must be the last step", pat)
			}
			n.keyCapID = id
			n.wants = true
			return nil
		default:
			p.lits[id] = append(p.lits[id], s)
			if n.keys == nil {
				n.keys = map[string]*node{}
			}
			c := n.keys[s]
			if c == nil {
				c = newNode()
				c.label = s
				n.keys[s] = c
				n.lits = append(n.lits, c)
				n.labels = append(n.labels, s)
				n.words = append(n.words, labelWordsOf(s))
				n.lens |= 1 << min(len(s), 63)
				n.wants = true
				n.makeKeyTable()
			}
			n = c
		}
	}
	if len(steps) == 0 {
		return fmt.Errorf("compile pattern %q: empty", pat)
	}
	n.capture = id
	return nil
}

func splitPattern(pat string) ([]string, error) {
	var steps []string
	for i := 0; i < len(pat); {
		switch {
		case strings.HasPrefix(pat[i:], "[*]"):
			steps = append(steps, "[*]")
			i += 3
		case pat[i] == '.':
			i++
		default:
			j := i
			for j < len(pat) && pat[j] != '.' && pat[j] != '[' {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q at %d", pat[i], i)
			}
			steps = append(steps, pat[i:j])
			i = j
		}
	}
	return steps, nil
}

// childKey returns the node reached from n by an object member key (nil when no pattern goes
// on). The lookup does not allocate. A key of up to 16 bytes whose slice has room for 8 (the
// rest of the line or chunk behind it: always, but at the very end of a chunk) is compared
// with a few literal keys as two 64-bit words, without a call.
func (n *node) childKey(key []byte) *node {
	if n == nil {
		return nil
	}
	if !n.litLen(len(key)) {
		return n.anyKey // no literal key is that long
	}
	if l := len(key); n.ktabOK && l <= 16 && cap(key) >= 8 {
		return n.lookupWords(keyWords(key))
	}
	if len(n.labels) <= 8 {
		if l := len(key); l <= 16 && cap(key) >= 8 {
			w := keyWords(key)
			for k := range n.words {
				if n.words[k] == w {
					return n.lits[k]
				}
			}
			return n.anyKey
		}
		for k, l := range n.labels {
			// (labels are never empty; the last bytes first: keys of a label's length differ
			// there more often than not, "function_args" and "function_name")
			if len(l) == len(key) && l[len(l)-1] == key[len(key)-1] && string(key) == l {
				return n.lits[k]
			}
		}
	} else if c, ok := n.keys[string(key)]; ok {
		return c
	}
	return n.anyKey
}

// keySeeds are the multipliers makeKeyTable tries, in turn, for a node's slots.
var keySeeds = [...]uint64{0x9E3779B97F4A7C15, 0xff51afd7ed558ccd, 0xc4ceb9fe1a85ec53, 0x94d049bb133111eb,
	0xbf58476d1ce4e5b9, 0x2545F4914F6CDD1D, 0xd6e8feb86659fd93, 0xa0761d6478bd642f}

// keySlot returns the slot (0–15) of the key whose labelWords are w, under the multiplier seed.
func keySlot(w labelWords, seed uint64) uint {
	return uint(((w.first ^ (w.last * 0x9E3779B97F4A7C15)) + uint64(w.n)) * seed >> 60)
}

// makeKeyTable fills n's ktab for its literal keys of up to 16 bytes, with the first of
// keySeeds under which no two of them share a slot; without one (or with over 15 keys) ktabOK
// is false.
func (n *node) makeKeyTable() {
	n.ktab, n.ktabOK = [16]uint8{}, false
	if len(n.lits) > 15 {
		return
	}
seeds:
	for _, seed := range keySeeds {
		var t [16]uint8
		for i, w := range n.words {
			if w.n < 0 {
				continue // over 16 bytes: compared by childKey, never looked up here
			}
			sl := keySlot(w, seed)
			if t[sl] != 0 {
				continue seeds
			}
			t[sl] = uint8(i + 1)
		}
		n.ktab, n.kseed, n.ktabOK = t, seed, true
		return
	}
}

// lookupWords returns the child of n (ktabOK) for the key of up to 16 bytes whose words are w:
// one probe of ktab, one comparison.
func (n *node) lookupWords(w labelWords) *node {
	if e := n.ktab[keySlot(w, n.kseed)]; e != 0 && n.words[e-1] == w {
		return n.lits[e-1]
	}
	return n.anyKey
}

// labelWords is a key of up to 16 bytes as its length and two little-endian words: its first
// 8 bytes (fewer: the rest zero) and, past 8 bytes, its last 8 (they overlap below 16). Two keys
// of up to 16 bytes are equal exactly when their labelWords are. A longer key gets a length
// that no key of up to 16 bytes has (it is compared byte by byte).
type labelWords struct {
	n           int
	first, last uint64
}

// labelWordsOf returns s's labelWords.
func labelWordsOf(s string) labelWords {
	if len(s) > 16 {
		return labelWords{n: -1}
	}
	var b [16]byte
	copy(b[:], s)
	return keyWords(b[:len(s)])
}

// keyWords returns the labelWords of key (at most 16 bytes, cap(key) at least 8: its first
// word is read whole and masked to its length).
func keyWords(key []byte) labelWords {
	l := len(key)
	w := labelWords{n: l, first: binary.LittleEndian.Uint64(key[:8])}
	if l < 8 {
		w.first &= 1<<(8*uint(l)) - 1
	} else if l > 8 {
		w.last = binary.LittleEndian.Uint64(key[l-8 : l])
	}
	return w
}

// litLen reports whether some literal key of n (not nil) is l bytes long (or, l over 62, at
// least 63): when not, a key of l bytes leads to n.anyKey. Small enough to be inlined, so the
// lexer's loops test it before calling childKey (most member keys of a record fail it).
func (n *node) litLen(l int) bool { return n.lens&(1<<min(l, 63)) != 0 }

// wantsKeys reports whether some pattern needs the member keys of an object at n, either to
// descend or to capture them.
func (n *node) wantsKeys() bool {
	return n != nil && n.wants
}
