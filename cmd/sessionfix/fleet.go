package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/engine/sqlite/fleetdb"
	"github.com/sessionfix/sessionfix/fleet"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/reports"
)

// Fleet findings (issue 28 item 4, docs/fleet.md): scan, check and audit say which host and
// user their findings are of — in SARIF (run properties "host" and "user", automationDetails.id
// "sessionfix/<host>/<user>/<command>/") and in the fleet database of --format sqlite --out
// FILE (engine/sqlite/fleetdb: one row per finding, a re-run replacing its host's and users'
// rows of that command).

// fleetFlags are --host and --user of scan, check and audit.
func fleetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "host", Usage: "the host the findings are recorded under (SARIF run properties and automationDetails.id, --format sqlite rows; default: this machine's host name)"},
		&cli.StringFlag{Name: "user", Usage: "the user the findings are recorded under (default: the owner of each home read: each PATH's owner, else the owner of $HOME)"},
	}
}

// fleetOutFlag is scan's and check's --out: only with --format sqlite.
func fleetOutFlag() cli.Flag {
	return &cli.StringFlag{Name: "out", Aliases: []string{"o"}, TakesFile: true,
		Usage: "with --format sqlite: the fleet database to write (created when missing; this host's and user's rows of the command replaced in one transaction; docs/fleet.md)"}
}

// checkSQLiteOut refuses --format sqlite without --out and --out without --format sqlite
// (scan and check write their other formats to standard output).
func checkSQLiteOut(format, out string) error {
	switch {
	case format == "sqlite":
		return usage.SQLiteOut(format, out)
	case out != "":
		return usageErrorf("--out goes with --format sqlite (the other formats are written to standard output)")
	}
	return nil
}

// writeFleet writes a run's rows to the fleet database out (fleetdb.Write) and says on standard
// error what it did; complete is false when some input could not be read (exit 3).
func writeFleet(ctx context.Context, env *Env, out, command string, o *fleet.Origin, rows []fleetdb.Row, complete bool) error {
	users := o.Users()
	for _, r := range rows {
		if !slices.Contains(users, r.User) {
			users = append(users, r.User)
		}
	}
	slices.Sort(users)
	w, err := fleetdb.Write(ctx, out, fleetdb.Run{Host: o.Host(), Command: command, Users: users, Time: env.Now(), Version: version, Complete: complete}, rows)
	if err != nil {
		return fmt.Errorf("%s: --out: %w", command, err)
	}
	how := "written to"
	if w.Created {
		how = "written to the new fleet database"
	}
	fmt.Fprintf(env.Err, "%s: %s %s %s (host %s, user %s; %s of earlier runs replaced)\n", command, plural(int(w.Inserted), "finding"), how,
		reports.Printable(out), reports.Printable(o.Host()), reports.Printable(strings.Join(users, ",")), plural(int(w.Deleted), "row"))
	return nil
}
