// Package fleet is whose findings a run reports (issue 28 item 4, docs/fleet.md): the host and,
// per home read, the user (Origin), as scan, check and audit put them in SARIF (run properties
// "host" and "user", automationDetails.id "sessionfix/<host>/<user>/<command>/") and in the
// fleet database's rows (engine/sqlite/fleetdb: one row per finding, built here from the SARIF
// results). It knows no agent and reads no store: the CLI gives it the homes and results.
package fleet

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sessionfix/sessionfix/engine/sqlite/fleetdb"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// Origin is whose findings a run reports: the host (--host or the host name) and, per
// home, the user (--user, or the home's owner).
type Origin struct {
	host string
	// user is --user ("" = each home's owner).
	user string
	// homes are the homes read (absolute paths, or references such as postgres://… redacted)
	// with their owners, longest first (a store is the longest home containing it).
	homes []Home
	// fallback is the user of a finding under no home (the owner of $HOME).
	fallback string
}

// Home is a home read and its user (the owner, or --user).
type Home struct{ Path, User string }

// NewOrigin is the origin of a run over roots (the PATHs given, or the default roots;
// home: $HOME) with --host and --user: a host or user that is empty after trimming, holds a
// "/" (automationDetails.id is split at it) or a control character is a usage error.
func NewOrigin(host, usr string, roots []string, home string) (*Origin, error) {
	for _, v := range []struct{ flag, val string }{{"host", host}, {"user", usr}} {
		if v.val == "" {
			continue
		}
		if strings.TrimSpace(v.val) == "" || strings.Contains(v.val, "/") || strings.IndexFunc(v.val, unicode.IsControl) >= 0 {
			return nil, usage.Errorf("--%s %q: a %s name is not empty, holds no \"/\" and no control character", v.flag, v.val, v.flag)
		}
	}
	if host == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "localhost"
		}
		host = h
	}
	o := &Origin{host: host, user: usr, fallback: OwnerOf(home)}
	for _, r := range roots {
		if store.IsReference(r) { // a database: the redacted reference (a password never reaches a row)
			o.homes = append(o.homes, Home{Path: store.Redact(r), User: o.fallback})
			continue
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			abs = r
		}
		o.homes = append(o.homes, Home{Path: filepath.Clean(abs), User: OwnerOf(abs)})
	}
	slices.SortStableFunc(o.homes, func(a, b Home) int { return len(b.Path) - len(a.Path) })
	return o, nil
}

// OwnerOf names the owner of path (its user name, else "uid N"); the current user when path
// cannot be read.
func OwnerOf(path string) string {
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

// HomeOf is the home a store (or rule file) at path lies under and its user: the longest home
// containing it, else the first home (a settings file given beside the homes), else $HOME's.
func (o *Origin) HomeOf(path string) Home {
	if o.user != "" {
		h := o.homeOfPath(path)
		h.User = o.user
		return h
	}
	return o.homeOfPath(path)
}

// homeOfPath is HomeOf without --user.
func (o *Origin) homeOfPath(path string) Home {
	for _, h := range o.homes {
		if path == h.Path || strings.HasPrefix(path, strings.TrimSuffix(h.Path, string(filepath.Separator))+string(filepath.Separator)) {
			return h
		}
	}
	if len(o.homes) > 0 {
		return o.homes[len(o.homes)-1]
	}
	return Home{User: o.fallback}
}

// Users are the users the run covers: --user, else every home's owner ($HOME's without one).
func (o *Origin) Users() []string {
	if o.user != "" {
		return []string{o.user}
	}
	var out []string
	for _, h := range o.homes {
		out = append(out, h.User)
	}
	if len(out) == 0 {
		out = append(out, o.fallback)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SARIF is the SARIF run of command with the origin's host and users: run properties "host"
// and "user" (several users joined by ","), automationDetails.id
// "sessionfix/<host>/<user>/<command>/" — per-host logs are no longer one category, and a
// merge tool keeps each host's results, while their fingerprints ("sessionfix/v1") stay the
// same on every host (so --baseline works across them).
func (o *Origin) SARIF(command string, rules []reports.SARIFRule, results []reports.SARIFResult, inv *reports.SARIFInvocation) reports.SARIFRun {
	u := strings.Join(o.Users(), ",")
	return reports.SARIFRun{Category: Category(o.host, u, command), Properties: map[string]string{"host": o.host, "user": u},
		Rules: rules, Results: results, Invocation: inv}
}

// Category is the automationDetails.id of a run: "sessionfix/<host>/<user>/<command>/",
// and the home's PATH after command in a multi-home audit's run ("…/audit/home/alice/").
func Category(host, user, command string, home ...string) string {
	parts := append([]string{"sessionfix", host, user, command}, home...)
	return strings.Join(parts, "/") + "/"
}

// Rows are the fleet database's rows of results: each result's store (Finding.Store, else its
// SARIF path) made absolute, its home and user (homeOf; at: the home of every result, for an
// audit's home), its agent (Finding.Agent, else agent).
func (o *Origin) Rows(results []reports.SARIFResult, agent string, at *Home) []fleetdb.Row {
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
		h := o.HomeOf(st)
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
		out = append(out, fleetdb.Row{User: h.User, Home: h.Path, Agent: a, Store: st, Site: f.Site, Class: class, Name: f.Name, NewName: f.New,
			RuleKind: f.RuleKind, Rule: f.Rule, Level: level, RuleID: r.RuleID, Fingerprint: r.Fingerprint, Message: r.Message})
	}
	return out
}

// Host is the host the findings are recorded under (--host, else the host name).
func (o *Origin) Host() string { return o.host }
