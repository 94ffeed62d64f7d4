package copilot

import "fmt"

// Functions only the tests call (moved out of the production code).

// Apply returns src with the edits (of one file, spans not overlapping) made; an edit whose
// bytes are no longer Old is an error naming it.
func Apply(src []byte, edits []Edit) ([]byte, error) {
	sorted := append([]Edit(nil), edits...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].Span.Start < sorted[j-1].Span.Start; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var out []byte
	at := 0
	for _, e := range sorted {
		if e.Span.Start < at || e.Span.End > len(src) || string(src[e.Span.Start:e.Span.End]) != e.Old {
			return nil, fmt.Errorf("%s: bytes %d-%d are not %q any more", e.File, e.Span.Start, e.Span.End, e.Old)
		}
		out = append(out, src[at:e.Span.Start]...)
		out = append(out, e.New...)
		at = e.Span.End
	}
	return append(out, src[at:]...), nil
}

// Readable reports whether every rule flag of the invocation could be read.
func (in Invocation) Readable() bool { return len(in.Problems) == 0 }
