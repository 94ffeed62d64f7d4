// Package nameinfo is the names command as a library: the names read from standard input
// (one a line, or JSON strings with --json), and for each its class (mcpname.Classify) and
// what the naming functions make of it (normalize, normalizeMcp, legacy; the registered name
// fix --rewrite-lossy writes for a lossy legacy one), as a table or JSON lines.
package nameinfo

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// Args are names given as arguments.
func Args(names []string) []Input {
	var out []Input
	for _, a := range names {
		out = append(out, Input{str: a})
	}
	return out
}

// Read reads the names of r, one a line (a leading byte order mark dropped, a final "\r"
// dropped; isJSON: each line a JSON string or an object with a "raw" string member). A line
// that cannot be read (invalid UTF-8 without isJSON, bad JSON) is said through bad with its
// line number and counted in the second result; the others are still read. The error is a
// read error of r.
func Read(r io.Reader, isJSON bool, bad func(line int64, msg string)) ([]Input, int, error) {
	var inputs []Input
	n := 0
	br := bufio.NewReader(r)
	for line := int64(1); ; line++ {
		text, err := br.ReadString('\n')
		if text == "" && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return nil, n, fmt.Errorf("read standard input: %w", err)
		}
		text = strings.TrimSuffix(text, "\n")
		if line == 1 {
			text = strings.TrimPrefix(text, "\uFEFF") // a byte order mark is not part of the first name
		}
		if !isJSON && !utf8.ValidString(text) {
			bad(line, "invalid UTF-8 (use --json with \\u escapes for such names)")
			n++
			if err == io.EOF {
				break
			}
			continue
		}
		if isJSON {
			in, perr := parseJSONName(text)
			if perr != nil {
				bad(line, perr.Error())
				n++
				continue
			}
			inputs = append(inputs, in)
		} else {
			inputs = append(inputs, Input{str: strings.TrimSuffix(text, "\r")})
		}
		if err == io.EOF {
			break
		}
	}
	return inputs, n, nil
}

// Input is one name to describe, with its exact UTF-16 units when it holds a lone surrogate.
type Input struct {
	str   string
	units []uint16
}

// parseJSONName reads a name given with --json: a JSON string, or an object whose "raw" member is a string.
func parseJSONName(line string) (Input, error) {
	b := []byte(strings.TrimSpace(line))
	if len(b) > 0 && b[0] == '{' {
		var raw *jsonscan.Capture
		sc := jsonscan.New(rawPattern, jsonscan.Document, func(r *jsonscan.Record) error {
			if r.Err != nil {
				return r.Err
			}
			if len(r.Captures) > 0 {
				c := r.Captures[0]
				raw = &c
			}
			return nil
		})
		if _, err := sc.Write(b); err != nil {
			return Input{}, fmt.Errorf("invalid JSON: %w", err)
		}
		if err := sc.Close(); err != nil {
			return Input{}, fmt.Errorf("invalid JSON: %w", err)
		}
		if raw == nil {
			return Input{}, fmt.Errorf("object has no string member \"raw\"")
		}
		b = raw.Raw
	}
	v, err := jsonscan.Unquote(b)
	if err != nil {
		return Input{}, fmt.Errorf("not a JSON string: %s", reports.Printable(truncate(string(b), 60)))
	}
	return Input{str: v.Str, units: v.Units}, nil
}

var rawPattern = jsonscan.MustCompile("raw")

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func describeName(in Input, ix *mcpname.Index) (class mcpname.Class, normalized, mcpNormalized, legacy string) {
	if in.units != nil {
		c := mcpname.ClassifyUnits(in.units, ix)
		return c.Class, mcpname.NormalizeUnits(in.units), c.Registered, mcpname.LegacyUnits(in.units)
	}
	c := mcpname.Classify(in.str, ix)
	return c.Class, mcpname.Normalize(in.str), c.Registered, mcpname.Legacy(in.str)
}

// lossyTarget is what fix --rewrite-lossy writes for a lossy-legacy name: its owner's raw
// identity and registered name (Normalize(owner)); ok false for any other class.
func lossyTarget(in Input, ix *mcpname.Index) (owner, registered string, ok bool) {
	if in.units != nil {
		return "", "", false // a lone surrogate is never provider-safe, so never lossy
	}
	c := mcpname.Classify(in.str, ix)
	if c.Class != mcpname.ClassLossyLegacy {
		return "", "", false
	}
	return c.Owner, c.OwnerRegistered, true
}

// Write writes one line per input to w: with format "jsonl" one JSON object (raw, class,
// normalized, mcp_normalized, legacy, and owner and rewrite_lossy for a lossy legacy name),
// else a table, then a note per lossy legacy name. ix is --inventory's index (nil without).
func Write(w io.Writer, inputs []Input, format string, ix *mcpname.Index) error {
	bw := bufio.NewWriter(w)
	if format == "jsonl" {
		var b []byte
		for _, in := range inputs {
			class, norm, mcpNorm, leg := describeName(in, ix)
			b = append(b[:0], `{"raw":`...)
			if in.units != nil {
				b = jsonscan.AppendQuoteUnits(b, in.units)
			} else {
				b = jsonscan.AppendQuote(b, in.str)
			}
			b = append(b, `,"class":`...)
			b = jsonscan.AppendQuote(b, string(class))
			b = append(b, `,"normalized":`...)
			b = jsonscan.AppendQuote(b, norm)
			b = append(b, `,"mcp_normalized":`...)
			if in.units != nil && !mcpname.HasPrefixUnits(in.units) {
				b = jsonscan.AppendQuoteUnits(b, in.units) // unchanged, exact
			} else {
				b = jsonscan.AppendQuote(b, mcpNorm)
			}
			b = append(b, `,"legacy":`...)
			b = jsonscan.AppendQuote(b, leg)
			if owner, reg, ok := lossyTarget(in, ix); ok {
				b = append(b, `,"owner":`...)
				b = jsonscan.AppendQuote(b, owner)
				b = append(b, `,"rewrite_lossy":`...)
				b = jsonscan.AppendQuote(b, reg)
			}
			b = append(b, "}\n"...)
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	t := &reports.Table{Columns: []string{"raw", "class", "normalized", "mcp_normalized", "legacy"}}
	var notes []string
	for _, in := range inputs {
		if owner, reg, ok := lossyTarget(in, ix); ok {
			notes = append(notes, fmt.Sprintf("%s: lossy legacy spelling of %s; fix keeps it, fix --rewrite-lossy writes %s", in.str, owner, reg))
		}
		class, norm, mcpNorm, leg := describeName(in, ix)
		raw := in.str
		if in.units != nil {
			raw = (&store.Site{Name: in.str, Units: in.units}).DisplayName()
			mcpNorm = raw
			if mcpname.HasPrefixUnits(in.units) {
				mcpNorm = mcpname.NormalizeUnits(in.units)
			}
		}
		t.Add(raw, report.ClassLabel(class, &store.Site{Name: in.str, Units: in.units}), norm, mcpNorm, leg)
	}
	if err := reports.WriteText(bw, t); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(bw, "note: %s\n", reports.Printable(n))
	}
	return bw.Flush()
}
