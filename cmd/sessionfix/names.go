package main

import (
	"context"
	"fmt"

	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/nameinfo"

	"github.com/urfave/cli/v2"
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
		Description: helptext.NamesDescription(),
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
	inputs := nameinfo.Args(opts.Names)
	bad := 0
	if opts.Stdin {
		if inputs, bad, err = nameinfo.Read(env.In, opts.JSON, func(n int64, msg string) {
			fmt.Fprintf(env.Err, "sessionfix: standard input line %d: %s\n", n, msg)
		}); err != nil {
			return err
		}
	}
	if err := nameinfo.Write(env.Out, inputs, opts.Format, ix); err != nil {
		return fmt.Errorf("results not written to standard output: %w", err)
	}
	if bad > 0 {
		return &exitErr{code: exitcode.Partial, err: fmt.Errorf("%s could not be read", plural(bad, "input line"))}
	}
	return nil
}
