package pipeline

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/store"
)

// PasswdFile is the user database --all-users reads (a variable for tests).
var PasswdFile = "/etc/passwd"

// SkippedHome is a user database entry --all-users does not cover, and why (said: nothing is
// left out silently).
type SkippedHome struct {
	User string `json:"user"`
	Dir  string `json:"home"`
	Why  string `json:"why"`
}

// Homes reads the user database at passwd (PasswdFile; the format of passwd(5): login, password,
// uid, gid, comment, home, shell) and returns the homes holding a default root of agent id ("":
// of any agent), in the order of the file, and the entries skipped: a home that is not an
// absolute path, is "/", does not exist or is not a directory (/nonexistent), is another
// user's already listed (the same directory: covered once, for its first user), or that holds
// no agent store; a line that is not an entry (a comment, NIS's "+", a bad uid) is skipped with
// its line number. Only a file that cannot be read is an error.
func Homes(passwd string, id store.AgentID) ([]report.Home, []SkippedHome, error) {
	f, err := os.Open(passwd)
	if err != nil {
		return nil, nil, fmt.Errorf("--all-users: read the user database: %w", err)
	}
	defer f.Close()
	var homes []report.Home
	var skipped []SkippedHome
	seen := map[string]string{} // resolved home → its first user
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ":")
		if len(fields) != 7 || strings.HasPrefix(fields[0], "+") || strings.HasPrefix(fields[0], "-") {
			skipped = append(skipped, SkippedHome{Why: fmt.Sprintf("line %d is not a user entry (login:password:uid:gid:comment:home:shell)", line)})
			continue
		}
		uid, err1 := strconv.ParseUint(fields[2], 10, 32)
		gid, err2 := strconv.ParseUint(fields[3], 10, 32)
		if err1 != nil || err2 != nil {
			skipped = append(skipped, SkippedHome{User: fields[0], Why: fmt.Sprintf("line %d: uid or gid is not a number", line)})
			continue
		}
		h := report.Home{User: fields[0], UID: uint32(uid), GID: uint32(gid), Dir: fields[5]}
		skip := func(why string) { skipped = append(skipped, SkippedHome{User: h.User, Dir: h.Dir, Why: why}) }
		if !filepath.IsAbs(h.Dir) || filepath.Clean(h.Dir) == "/" {
			skip("not a home directory")
			continue
		}
		fi, err := os.Stat(h.Dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			skip("does not exist")
			continue
		case err != nil:
			skip(err.Error())
			continue
		case !fi.IsDir():
			skip("not a directory")
			continue
		}
		key := h.Dir
		if r, err := filepath.EvalSymlinks(h.Dir); err == nil {
			key = r
		}
		if first, ok := seen[key]; ok {
			skip("the home of " + first + " too: covered once, as " + first + "'s")
			continue
		}
		seen[key] = h.User
		h.Roots = homeRoots(id, h.Dir)
		if len(h.Roots) == 0 {
			skip("no agent store")
			continue
		}
		homes = append(homes, h)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("--all-users: read %s: %w", passwd, err)
	}
	return homes, skipped, nil
}

// homeRoots are the default roots of agent id in the home dir that exist: "" every agent's, as a
// run without PATH finds them (all.Looked, issue 23 item 4), else that agent's
// (all.DefaultRoots), each once.
func homeRoots(id store.AgentID, dir string) []string {
	env := agent.Env{Getenv: func(string) string { return "" }, Home: dir}
	var out []string
	if id == "" {
		for _, l := range all.Looked(env) {
			out = append(out, l.Found...)
		}
		return out
	}
	for _, r := range all.DefaultRoots(id, env) {
		if _, err := os.Stat(r); err == nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// AllUsersRefusal is why --all-users is refused: it is root's (it reads, and fix rewrites, every
// user's home); "" as root.
func AllUsersRefusal() string {
	if owner.AsRoot() {
		return ""
	}
	return fmt.Sprintf("--all-users is for root (it reads, and fix --apply rewrites, every user's home): you are %s; run it as root, or give the PATH of your own stores (nothing was done)",
		owner.Describe(uint32(owner.Euid())))
}

// homeCounts fills each home's counts from the stores of the report under it.
func homeCounts(homes []report.Home, rows []report.StoreRow) []report.Home {
	out := make([]report.Home, len(homes))
	copy(out, homes)
	for i := range out {
		h := &out[i]
		h.Stores, h.Rewrite, h.Kept, h.Problems = 0, 0, 0, 0
		for _, r := range rows {
			if !report.UnderAny(r.Path, h.Roots) {
				continue
			}
			h.Stores++
			h.Rewrite += r.Rewrite
			h.Kept += r.Kept
			h.Problems += r.Problems
			if r.Error != "" {
				h.Problems++
			}
		}
	}
	return out
}

// SkippedNotes are the notes (severity info) saying which user database entries --all-users
// did not cover: one a reason, naming each user and home.
func SkippedNotes(skipped []SkippedHome) []report.ProblemRow {
	var order []string
	by := map[string][]string{}
	for _, sk := range skipped {
		if sk.User == "" && sk.Dir == "" {
			order = append(order, sk.Why)
			by[sk.Why] = nil
			continue
		}
		if _, ok := by[sk.Why]; !ok {
			order = append(order, sk.Why)
		}
		by[sk.Why] = append(by[sk.Why], fmt.Sprintf("%s (%s)", sk.User, sk.Dir))
	}
	var out []report.ProblemRow
	for _, why := range order {
		r := why + ": not covered by --all-users"
		if u := by[why]; len(u) > 0 {
			r = fmt.Sprintf("%s: %s, not covered by --all-users", strings.Join(u, ", "), why)
		}
		out = append(out, report.ProblemRow{Path: PasswdFile, Severity: string(store.SevInfo), Reason: r})
	}
	return out
}
