package main

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/engine/sqlite/fleetdb"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
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
	case format == "sqlite" && (out == "" || out == "-"):
		return usageErrorf("--format sqlite needs --out FILE (the fleet database; standard output cannot hold a database)")
	case format != "sqlite" && out != "":
		return usageErrorf("--out goes with --format sqlite (the other formats are written to standard output)")
	}
	return nil
}

// fleetOrigin is whose findings a run reports: the host (--host or the host name) and, per
// home, the user (--user, or the home's owner).
type fleetOrigin struct {
	host string
	// user is --user ("" = each home's owner).
	user string
	// homes are the homes read (absolute paths, or references such as postgres://… redacted)
	// with their owners, longest first (a store is the longest home containing it).
	homes []fleetHome
	// fallback is the user of a finding under no home (the owner of $HOME).
	fallback string
}

type fleetHome struct{ path, user string }

// newFleetOrigin is the origin of a run over roots (the PATHs given, or the default roots;
// home: $HOME) with --host and --user: a host or user that is empty after trimming, holds a
// "/" (automationDetails.id is split at it) or a control character is a usage error.
func newFleetOrigin(host, usr string, roots []string, home string) (*fleetOrigin, error) {
	for _, v := range []struct{ flag, val string }{{"host", host}, {"user", usr}} {
		if v.val == "" {
			continue
		}
		if strings.TrimSpace(v.val) == "" || strings.Contains(v.val, "/") || strings.IndexFunc(v.val, unicode.IsControl) >= 0 {
			return nil, usageErrorf("--%s %q: a %s name is not empty, holds no \"/\" and no control character", v.flag, v.val, v.flag)
		}
	}
	if host == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "localhost"
		}
		host = h
	}
	o := &fleetOrigin{host: host, user: usr, fallback: ownerOf(home)}
	for _, r := range roots {
		if store.IsReference(r) { // a database: the redacted reference (a password never reaches a row)
			o.homes = append(o.homes, fleetHome{path: store.Redact(r), user: o.fallback})
			continue
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			abs = r
		}
		o.homes = append(o.homes, fleetHome{path: filepath.Clean(abs), user: ownerOf(abs)})
	}
	slices.SortStableFunc(o.homes, func(a, b fleetHome) int { return len(b.path) - len(a.path) })
	return o, nil
}

// ownerOf names the owner of path (its user name, else "uid N"); the current user when path
// cannot be read.
func ownerOf(path string) string {
	var uid uint32
	if fi, err := os.Stat(path); err == nil {
		if u, ok := owner.UID(fi); ok {
			uid = u
		} else {
			uid = uint32(os.Getuid())
		}
	} else {
		uid = uint32(os.Getuid())
	}
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid %d", uid)
}

// homeOf is the home a store (or rule file) at path lies under and its user: the longest home
// containing it, else the first home (a settings file given beside the homes), else $HOME's.
func (o *fleetOrigin) homeOf(path string) fleetHome {
	if o.user != "" {
		h := o.homeOfPath(path)
		h.user = o.user
		return h
	}
	return o.homeOfPath(path)
}

func (o *fleetOrigin) homeOfPath(path string) fleetHome {
	for _, h := range o.homes {
		if path == h.path || strings.HasPrefix(path, strings.TrimSuffix(h.path, string(filepath.Separator))+string(filepath.Separator)) {
			return h
		}
	}
	if len(o.homes) > 0 {
		return o.homes[len(o.homes)-1]
	}
	return fleetHome{user: o.fallback}
}

// users are the users the run covers: --user, else every home's owner ($HOME's without one).
func (o *fleetOrigin) users() []string {
	if o.user != "" {
		return []string{o.user}
	}
	var out []string
	for _, h := range o.homes {
		out = append(out, h.user)
	}
	if len(out) == 0 {
		out = append(out, o.fallback)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sarif is the SARIF run of command with the origin's host and users: run properties "host"
// and "user" (several users joined by ","), automationDetails.id
// "sessionfix/<host>/<user>/<command>/" — per-host logs are no longer one category, and a
// merge tool keeps each host's results, while their fingerprints ("sessionfix/v1") stay the
// same on every host (so --baseline works across them).
func (o *fleetOrigin) sarif(command string, rules []reports.SARIFRule, results []reports.SARIFResult, inv *reports.SARIFInvocation) reports.SARIFRun {
	u := strings.Join(o.users(), ",")
	return reports.SARIFRun{Category: fleetCategory(o.host, u, command), Properties: map[string]string{"host": o.host, "user": u},
		Rules: rules, Results: results, Invocation: inv}
}

// fleetCategory is the automationDetails.id of a run: "sessionfix/<host>/<user>/<command>/",
// and the home's PATH after command in a multi-home audit's run ("…/audit/home/alice/").
func fleetCategory(host, user, command string, home ...string) string {
	parts := append([]string{"sessionfix", host, user, command}, home...)
	return strings.Join(parts, "/") + "/"
}

// rows are the fleet database's rows of results: each result's store (Finding.Store, else its
// SARIF path) made absolute, its home and user (homeOf; at: the home of every result, for an
// audit's home), its agent (Finding.Agent, else agent).
func (o *fleetOrigin) rows(results []reports.SARIFResult, agent string, at *fleetHome) []fleetdb.Row {
	var out []fleetdb.Row
	for _, r := range results {
		f := r.Finding
		st := f.Store
		if st == "" {
			st = r.Path
		}
		if store.IsReference(st) {
			st = store.Redact(st)
		} else if st != "" && !filepath.IsAbs(st) {
			if a, err := filepath.Abs(st); err == nil {
				st = a
			}
		}
		h := o.homeOf(st)
		if at != nil {
			h = *at
		}
		a := f.Agent
		if a == "" {
			a = agent
		}
		class := f.Class
		if class == "" {
			class = r.RuleID[strings.LastIndex(r.RuleID, "/")+1:]
		}
		level := r.Level
		if level == "" {
			level = "error"
		}
		out = append(out, fleetdb.Row{User: h.user, Home: h.path, Agent: a, Store: st, Site: f.Site, Class: class, Name: f.Name, NewName: f.New,
			RuleKind: f.RuleKind, Rule: f.Rule, Level: level, RuleID: r.RuleID, Fingerprint: r.Fingerprint, Message: r.Message})
	}
	return out
}

// writeFleet writes a run's rows to the fleet database out (fleetdb.Write) and says on standard
// error what it did; complete is false when some input could not be read (exit 3).
func writeFleet(ctx context.Context, env *Env, out, command string, o *fleetOrigin, rows []fleetdb.Row, complete bool) error {
	users := o.users()
	for _, r := range rows {
		if !slices.Contains(users, r.User) {
			users = append(users, r.User)
		}
	}
	slices.Sort(users)
	w, err := fleetdb.Write(ctx, out, fleetdb.Run{Host: o.host, Command: command, Users: users, Time: env.Now(), Version: version, Complete: complete}, rows)
	if err != nil {
		return fmt.Errorf("%s: --out: %w", command, err)
	}
	how := "written to"
	if w.Created {
		how = "written to the new fleet database"
	}
	fmt.Fprintf(env.Err, "%s: %s %s %s (host %s, user %s; %s of earlier runs replaced)\n", command, plural(int(w.Inserted), "finding"), how,
		reports.Printable(out), reports.Printable(o.host), reports.Printable(strings.Join(users, ",")), plural(int(w.Deleted), "row"))
	return nil
}
