package report

import (
	"path/filepath"
	"strings"
)

// Home is one user's home that --all-users covers: the user (login, uid, gid), the home
// directory as the user database gives it, and the default roots of the agents (every agent's,
// or --agent's) that exist in it, found as a run without PATH finds them in the home of whoever
// runs it — with no environment variable of root's (an agent's home variable, $XDG_DATA_HOME…:
// the user's are not known), so each agent's home-relative default.
type Home struct {
	User     string   `json:"user"`
	UID      uint32   `json:"uid"`
	GID      uint32   `json:"gid"`
	Dir      string   `json:"home"`
	Roots    []string `json:"roots"`
	Stores   int      `json:"stores"`
	Rewrite  int      `json:"rewrite"`
	Kept     int      `json:"kept"`
	Problems int      `json:"problems"`
}

// UnderHome reports whether the store at p is under one of h's roots.
func UnderHome(p string, h Home) bool { return UnderAny(p, h.Roots) }

// UnderAny reports whether p is one of roots or inside one.
func UnderAny(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
		if real, err := filepath.EvalSymlinks(r); err == nil && (p == real || strings.HasPrefix(p, real+"/")) {
			return true
		}
	}
	return false
}
