// Package cliargs checks a sessionfix command line before urfave/cli runs it, and words its
// flag errors: "help CMD" resolved and an unknown command named, a flag after an argument or a
// value flag given an empty value refused, and Go's flag package messages ("invalid value
// \"x\" for flag -busy-timeout: parse error") turned into sentences that say what was expected.
// Each such error is a usage error (the command exits 2); the flags themselves are the
// command's.
package cliargs

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"
)

var (
	flagInvalidValue = regexp.MustCompile(`^invalid value "((?:[^"\\]|\\.)*)" for flag -(\S+): (.*)$`)
	flagInvalidBool  = regexp.MustCompile(`^invalid boolean value "((?:[^"\\]|\\.)*)" for -(\S+): (.*)$`)
	flagUndefined    = regexp.MustCompile(`^flag provided but not defined: -(\S+)$`)
	flagNeedsValue   = regexp.MustCompile(`^flag needs an argument: -(\S+)$`)
)

// FlagError turns urfave/cli's flag error err (Go's flag package wording) of command cmd
// ("" for the top level; flags its flags) into a sentence saying what was expected, the flag
// spelled as the help spells it.
func FlagError(cmd string, flags []cli.Flag, err error) error {
	help := "sessionfix --help"
	if cmd != "" {
		help = "sessionfix " + cmd + " --help"
	}
	msg := err.Error()
	if m := flagInvalidValue.FindStringSubmatch(msg); m != nil {
		got, _ := strconv.Unquote(`"` + m[1] + `"`)
		want := "a valid value"
		switch f := FindFlag(flags, m[2]); f.(type) {
		case *cli.DurationFlag:
			want = "a duration such as 5s, 1m30s or 500ms"
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			want = "a whole number such as 4"
		case *cli.Float64Flag:
			want = "a number such as 0.5"
		case nil:
		default:
			if !strings.HasSuffix(m[3], "parse error") {
				want = "a valid value (" + m[3] + ")"
			}
		}
		return fmt.Errorf("%s: expected %s, got %q", dashed(m[2]), want, got)
	}
	if m := flagInvalidBool.FindStringSubmatch(msg); m != nil {
		got, _ := strconv.Unquote(`"` + m[1] + `"`)
		return fmt.Errorf("%s: expected true or false (or the flag alone), got %q", dashed(m[2]), got)
	}
	if m := flagUndefined.FindStringSubmatch(msg); m != nil {
		if cmd == "" && m[1] == "v" {
			// -v was --version once; it is --verbose wherever a command has it.
			return fmt.Errorf("unknown flag -v: the version is --version (-v is --verbose, of scan and fix)")
		}
		if f, ok := FindFlag(flags, "format").(*cli.StringFlag); ok && len(m[1]) > 1 && slices.Contains(formatValues(f.Usage), m[1]) {
			// `scan --json` (a cron line written from memory): the format is a value of --format.
			return fmt.Errorf("unknown flag %s: the output format is a value of --format (--format %s; %s lists the flags)", dashed(m[1]), m[1], help)
		}
		return fmt.Errorf("unknown flag %s (%s lists the flags)", dashed(m[1]), help)
	}
	if m := flagNeedsValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s needs a value (%s)", dashed(m[1]), help)
	}
	return err
}

// formatValues are the values a --format usage lists: the words after "format:" up to the
// first parenthesis ("output format: table, json, or sarif (…)": table, json, sarif; "or" is
// not one).
func formatValues(usage string) []string {
	_, list, ok := strings.Cut(usage, "format:")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, "(")
	var out []string
	for _, w := range strings.FieldsFunc(list, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if w != "or" {
			out = append(out, w)
		}
	}
	return out
}

// dashed spells a flag name as the help does: --name, or -n for a one-letter alias.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// FindFlag is the flag of flags named name (any of its names), nil when none is.
func FindFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// ResolveCommand checks the command word of args (the first argument after the global flags)
// before urfave/cli sees it: "help" and "help CMD" become "--help" and "CMD --help" (the help
// command itself is hidden), and a word that names no command is a usage error
// (`unknown command "frob"`) instead of urfave/cli's "No help topic" with exit 1.
func ResolveCommand(app *cli.App, args []string) ([]string, error) {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		if args[i] == "--" {
			i++
			break
		}
		i++
	}
	if i >= len(args) {
		return args, nil
	}
	word := args[i]
	if word == "help" {
		rest := args[i+1:]
		out := append([]string{}, args[:i]...)
		switch {
		case len(rest) == 0:
			return append(out, "--help"), nil
		case len(rest) > 1:
			return nil, fmt.Errorf("help takes one command, not %d (sessionfix help COMMAND)", len(rest))
		case app.Command(rest[0]) == nil:
			return nil, unknownCommand(app, rest[0])
		}
		return append(out, rest[0], "--help"), nil
	}
	if app.Command(word) == nil {
		return nil, unknownCommand(app, word)
	}
	return args, nil
}

func unknownCommand(app *cli.App, word string) error {
	var names []string
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return fmt.Errorf("unknown command %q: the commands are %s (see sessionfix --help)", word, strings.Join(names, ", "))
}

// CheckFlagOrder rejects a flag written after a positional argument: urfave/cli stops parsing
// flags at the first argument, so "fix DIR --apply" would silently be a dry run over a path
// named "--apply". "--" ends flags as usual. A flag the command does not have, before any
// argument, ends the check: urfave/cli then names it unknown (its value, if it has one, is not
// an argument: "scan --acme-version 2.1.332 --format json DIR" is an unknown flag, not
// "--format comes after an argument").
//
// It also rejects a value flag given an empty value on the command line (`--state-dir ""`,
// `--agent=`: a script's unset variable), which urfave/cli would take as the flag not given —
// the run would go on with the default state directory, agent, release or project instead of
// the one meant: "--state-dir needs a directory; it was given an empty one", exit 2 (every
// command, every value flag; EmptyValueNoun). An empty environment variable
// (SESSIONFIX_STATE_DIR=) is not the command line: it still reads as unset.
func CheckFlagOrder(app *cli.App, args []string) error {
	if len(args) < 3 {
		return nil
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return nil
	}
	takesValue := map[string]bool{}
	known := map[string]bool{"h": true, "help": true}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			known[n] = true
			takesValue[n] = !isBool
		}
	}
	sawArg := false
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if sawArg {
				usage := cmd.ArgsUsage
				if usage == "" {
					usage = "ARGS"
				}
				return fmt.Errorf("flag %s comes after an argument: put flags first (sessionfix %s [flags] %s)", a, args[1], usage)
			}
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !known[name] {
				return nil // urfave/cli: "unknown flag"
			}
			if !hasValue && takesValue[name] && i+1 < len(args) {
				i++ // its value
				value, hasValue = args[i], true
			}
			if hasValue && value == "" && takesValue[name] {
				f := FindFlag(cmd.Flags, name)
				if noun := EmptyValueNoun(f); noun != "" {
					// Spelled as the help does: the first name (-o "" is --out).
					return fmt.Errorf("--%s needs %s; it was given an empty one", f.Names()[0], noun)
				}
			}
		default:
			sawArg = true
		}
	}
	return nil
}

// EmptyValueNoun is what an empty value of flag f lacks, for CheckFlagOrder's usage error: "a
// file name" for a flag taking a file (TakesFile), "a directory", "a path", "an agent name", "a
// finding class" or "a value"; "" for
// the flags whose own check already refuses an empty value with exit 2 and says which values it
// takes (--format, --provider, --mode, the durations and --workers).
func EmptyValueNoun(f cli.Flag) string {
	if f == nil {
		return ""
	}
	switch name := f.Names()[0]; name {
	case "format", "provider", "mode", "busy-timeout", "discover-timeout", "workers":
		return ""
	case "out", "tools-out":
		return "a path (- for standard output)"
	case "state-dir", "project", "agents":
		return "a directory"
	case "history":
		return "a path"
	case "agent":
		return "an agent name"
	case "fail-on":
		return "a finding class"
	}
	takesFile := false
	switch f := f.(type) {
	case *cli.StringFlag:
		takesFile = f.TakesFile
	case *cli.StringSliceFlag:
		takesFile = f.TakesFile
	case *cli.GenericFlag:
		takesFile = f.TakesFile
	case *cli.PathFlag:
		takesFile = true
	}
	if takesFile {
		return "a file name"
	}
	return "a value"
}
