package settings

import (
	"fmt"
	"os"
	"path/filepath"
)

// Role says what a directory given to "audit PATH" is to Qwen Code.
type Role string

const (
	// RoleHome: a Qwen Code global directory (a copied ~/.qwen): its settings.json is the
	// user scope, agents/ its subagents, and the directory itself the session history.
	RoleHome Role = "qwen-home"
	// RoleProject: a workspace: .qwen/settings.json is the workspace scope, .qwen/agents its
	// subagents.
	RoleProject Role = "project"
)

// PathInputs are the audit inputs of one PATH: only files that exist are named.
type PathInputs struct {
	Path string
	Role Role
	// Dir is the Qwen directory the inputs are in: PATH for a home, PATH/.qwen for a project
	// (or a copied home directory holding .qwen/projects).
	Dir string
	// Settings is the settings file ("" when Dir has none) with its Scope.
	Settings string
	Scope    Scope
	// Agents is Dir/agents when it is a directory, else "".
	Agents string
	// History is the session history to infer tool names from (a home only), else "".
	History string
}

// InputsOf classifies a directory given to audit (issue 8 item 13) and lists its inputs:
//   - a Qwen home — its base name is ".qwen", or it holds settings.json or projects/ (a copied
//     ~/.qwen): user scope Dir/settings.json, subagents Dir/agents, history Dir;
//   - a user's home directory whose .qwen holds projects/: that .qwen as a Qwen home;
//   - a project — it holds .qwen/: workspace scope .qwen/settings.json, subagents .qwen/agents.
//
// Anything else (missing, not a directory, neither shape) is an error saying what was looked
// for. Symbolic links are followed.
func InputsOf(path string) (*PathInputs, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory (give a settings file with --settings)", path)
	}
	in := &PathInputs{Path: path}
	switch {
	case filepath.Base(filepath.Clean(path)) == ".qwen" || isFile(filepath.Join(path, "settings.json")) || isDir(filepath.Join(path, "projects")):
		in.Role, in.Dir = RoleHome, path
	case isDir(filepath.Join(path, ".qwen", "projects")):
		in.Role, in.Dir = RoleHome, filepath.Join(path, ".qwen")
	case isDir(filepath.Join(path, ".qwen")):
		in.Role, in.Dir = RoleProject, filepath.Join(path, ".qwen")
	default:
		return nil, fmt.Errorf("%s: neither a Qwen Code home (settings.json or projects/ in it) nor a project (a .qwen directory in it)", path)
	}
	if p := filepath.Join(in.Dir, "settings.json"); isFile(p) {
		in.Settings = p
		in.Scope = ScopeWorkspace
		if in.Role == RoleHome {
			in.Scope = ScopeUser
		}
	}
	if p := filepath.Join(in.Dir, "agents"); isDir(p) {
		in.Agents = p
	}
	if in.Role == RoleHome {
		in.History = in.Dir
	}
	return in, nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
