package usage

import (
	"slices"
	"strings"
)

// The checks every command shares, each message written once (issue 24 item 4: options were
// validated in four places, the same sentences copied between fix, fix --rules, scan, check,
// undo, runs and audit). Each returns nil or an *Error (exit 2), before any side effect.

// Format refuses a --format value not among allowed: "--format must be table or json, not
// \"x\"" (allowed listed in order, the last after "or").
func Format(value string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	list := allowed[len(allowed)-1]
	if len(allowed) > 1 {
		list = strings.Join(allowed[:len(allowed)-1], ", ") + " or " + list
	}
	return Errorf("--format must be %s, not %q", list, value)
}

// Workers refuses a negative --workers (0 is the number of CPUs).
func Workers(n int) error {
	if n < 0 {
		return Errorf("--workers must not be negative (0 = the number of CPUs)")
	}
	return nil
}

// Apply refuses --apply with --dry-run, and --apply without --yes when standard input is not a
// terminal (terminal: the [y/N] question can be asked).
func Apply(apply, dryRun, yes, terminal bool) error {
	switch {
	case apply && dryRun:
		return Errorf("--apply and --dry-run contradict each other (nothing was changed)")
	case apply && !yes && !terminal:
		return Errorf("--apply needs --yes when standard input is not a terminal (nothing was changed)")
	}
	return nil
}

// QuietVerbose refuses --quiet with --verbose.
func QuietVerbose(quiet, verbose bool) error {
	if quiet && verbose {
		return Errorf("--quiet and --verbose contradict each other")
	}
	return nil
}

// DiscoverUntrusted refuses --discover-untrusted without --discover.
func DiscoverUntrusted(untrusted, discover bool) error {
	if untrusted && !discover {
		return Errorf("--discover-untrusted goes with --discover (it lets --discover start what it otherwise refuses)")
	}
	return nil
}

// SQLiteOut refuses --format sqlite without a file to write (out "" or "-": standard output).
func SQLiteOut(format, out string) error {
	if format == "sqlite" && (out == "" || out == "-") {
		return Errorf("--format sqlite needs --out FILE (the fleet database; standard output cannot hold a database)")
	}
	return nil
}

// FileName refuses an empty value of a flag naming a file (a script's unset variable: the run
// would otherwise go on without the file meant).
func FileName(flag, value string) error {
	if value == "" {
		return Errorf("--%s needs a file name; it was given an empty one", flag)
	}
	return nil
}
