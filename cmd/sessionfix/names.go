package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

type namesOptions struct {
	Names     []string
	Stdin     bool
	JSON      bool
	Format    string
	Inventory string
}

func newNamesCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "names",
		Usage:       "show how names are classified and rewritten (normalize, normalizeMcp, legacy)",
		ArgsUsage:   "[NAME...]",
		Description: namesDescription(),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stdin", Usage: "read names from standard input, one per line"},
			&cli.BoolFlag{Name: "json", Usage: "with --stdin: each line is a JSON string (or an object with \"raw\")"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table, or jsonl (one JSON object a line; json is accepted too)"},
			fileFlag("inventory", "JSON inventory of MCP tools, to tell lossy-legacy and normalized names (as scan does)"),
		},
		Action: func(c *cli.Context) error {
			opts := namesOptions{Names: c.Args().Slice(), Stdin: c.Bool("stdin"), JSON: c.Bool("json"), Format: c.String("format"), Inventory: c.String("inventory")}
			return runNames(c.Context, env, opts)
		},
	}
}

// namesDescription is the names command's --help description: what the columns are comes
// from the default agent's Help.Names (whose naming functions they show), its examples after
// the generic ones from Help.NamesExamples.
func namesDescription() string {
	return `For support engineers: for each name, its class (docs/naming.md) and what ` + defaultHelp().Names + `.

Names come as arguments or, with --stdin, one per line on standard input. With --json each
input line is a JSON string (or an object with a "raw" key), so any name can be given:
control characters, lone surrogates ("\ud800"), newlines.

EXAMPLES:
   sessionfix names mcp__lit__literature.search_pubmed
   printf 'mcp__foo.bar__deploy.prod\nread_file\n' | sessionfix names --stdin
` + examplesHelp("names", nil, 0, func(h *agent.Help) []agent.Example { return h.NamesExamples })
}

// nameInput is one name to describe, with its exact UTF-16 units when it holds a lone surrogate.
type nameInput struct {
	str   string
	units []uint16
}

func runNames(_ context.Context, env *Env, opts namesOptions) error {
	if opts.Format == "json" {
		opts.Format = "jsonl"
	}
	if err := usage.Format(opts.Format, "table", "jsonl"); err != nil {
		return err
	}
	ix, err := loadInventoryIndex(opts.Inventory)
	if err != nil {
		return err
	}
	if opts.JSON && !opts.Stdin {
		return usageErrorf("--json needs --stdin")
	}
	if opts.Stdin && len(opts.Names) > 0 {
		return usageErrorf("give names as arguments or with --stdin, not both")
	}
	if !opts.Stdin && len(opts.Names) == 0 {
		return usageErrorf("no names: give names as arguments or use --stdin")
	}
	var inputs []nameInput
	bad := 0
	if opts.Stdin {
		r := bufio.NewReader(env.In)
		for n := int64(1); ; n++ {
			line, err := r.ReadString('\n')
			if line == "" && err == io.EOF {
				break
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("read standard input: %w", err)
			}
			line = strings.TrimSuffix(line, "\n")
			if n == 1 {
				line = strings.TrimPrefix(line, "\uFEFF") // a byte order mark is not part of the first name
			}
			if !opts.JSON && !utf8.ValidString(line) {
				fmt.Fprintf(env.Err, "sessionfix: standard input line %d: invalid UTF-8 (use --json with \\u escapes for such names)\n", n)
				bad++
				if err == io.EOF {
					break
				}
				continue
			}
			if opts.JSON {
				in, perr := parseJSONName(line)
				if perr != nil {
					fmt.Fprintf(env.Err, "sessionfix: standard input line %d: %v\n", n, perr)
					bad++
					continue
				}
				inputs = append(inputs, in)
			} else {
				inputs = append(inputs, nameInput{str: strings.TrimSuffix(line, "\r")})
			}
			if err == io.EOF {
				break
			}
		}
	} else {
		for _, a := range opts.Names {
			inputs = append(inputs, nameInput{str: a})
		}
	}
	if err := writeNames(env.Out, inputs, opts.Format, ix); err != nil {
		return fmt.Errorf("results not written to standard output: %w", err)
	}
	if bad > 0 {
		return &exitErr{code: exitcode.Partial, err: fmt.Errorf("%s could not be read", plural(bad, "input line"))}
	}
	return nil
}

// parseJSONName reads a JSON string, or an object whose "raw" member is a string.
func parseJSONName(line string) (nameInput, error) {
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
			return nameInput{}, fmt.Errorf("invalid JSON: %w", err)
		}
		if err := sc.Close(); err != nil {
			return nameInput{}, fmt.Errorf("invalid JSON: %w", err)
		}
		if raw == nil {
			return nameInput{}, fmt.Errorf("object has no string member \"raw\"")
		}
		b = raw.Raw
	}
	v, err := jsonscan.Unquote(b)
	if err != nil {
		return nameInput{}, fmt.Errorf("not a JSON string: %s", reports.Printable(truncate(string(b), 60)))
	}
	return nameInput{str: v.Str, units: v.Units}, nil
}

var rawPattern = jsonscan.MustCompile("raw")

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func describeName(in nameInput, ix *mcpname.Index) (class mcpname.Class, normalized, mcpNormalized, legacy string) {
	if in.units != nil {
		c := mcpname.ClassifyUnits(in.units, ix)
		return c.Class, mcpname.NormalizeUnits(in.units), c.Registered, mcpname.LegacyUnits(in.units)
	}
	c := mcpname.Classify(in.str, ix)
	return c.Class, mcpname.Normalize(in.str), c.Registered, mcpname.Legacy(in.str)
}

// lossyTarget is what fix --rewrite-lossy writes for a lossy-legacy name: its owner's raw
// identity and registered name (Normalize(owner)); ok false for any other class.
func lossyTarget(in nameInput, ix *mcpname.Index) (owner, registered string, ok bool) {
	if in.units != nil {
		return "", "", false // a lone surrogate is never provider-safe, so never lossy
	}
	c := mcpname.Classify(in.str, ix)
	if c.Class != mcpname.ClassLossyLegacy {
		return "", "", false
	}
	return c.Owner, c.OwnerRegistered, true
}

func writeNames(w io.Writer, inputs []nameInput, format string, ix *mcpname.Index) error {
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
		t.Add(raw, pipeline.ClassLabel(class, &store.Site{Name: in.str, Units: in.units}), norm, mcpNorm, leg)
	}
	if err := reports.WriteText(bw, t); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(bw, "note: %s\n", reports.Printable(n))
	}
	return bw.Flush()
}
