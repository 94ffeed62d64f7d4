package main

import (
	"bytes"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/helpformat"
)

func init() {
	cli.HelpPrinter = printHelp
	// -v is --verbose wherever a command has it (scan, fix): the version is --version only.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
}

// printHelp is urfave/cli's HelpPrinter: the template rendered as urfave/cli renders it, then
// laid out again by helpformat.Format for helpformat.Width columns.
func printHelp(w io.Writer, templ string, data any) {
	var b bytes.Buffer
	cli.HelpPrinterCustom(&b, templ, data, nil)
	_, _ = io.WriteString(w, helpformat.Format(b.String(), helpformat.Width))
}
