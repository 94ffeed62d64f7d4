package qwen

import (
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
)

// Settings is Qwen Code's settings pass of scan and fix: a directory PATH contributes its
// settings.json (a runtime directory such as ~/.qwen) and its .qwen/settings.json (a
// project); each file's rules in legacy spellings are listed (settings.LegacyRules).
var Settings = &agent.Settings{
	Files: func(dir string) []string {
		return []string{filepath.Join(dir, "settings.json"), filepath.Join(dir, ".qwen", "settings.json")}
	},
	Scan: scanSettings,
}

// scanSettings reads each settings file (its scope guessed by settings.ScopeOf) and lists
// its rules in legacy spellings against ix; a file that cannot be parsed is an error with
// its line and column, and the others are still read.
func scanSettings(paths []string, env mcpconfig.Env, home string, ix *mcpname.Index) agent.SettingsResult {
	var res agent.SettingsResult
	global := settings.GlobalDir(settings.DiscoverOptions{Env: env, Home: home})
	for _, p := range paths {
		f, err := settings.Load(p, settings.ScopeOf(p, home, global), env)
		if err != nil {
			res.Errors = append(res.Errors, agent.FileError{Path: p, Err: err})
			continue
		}
		res.Files = append(res.Files, p)
		for _, l := range settings.LegacyRules(f.Rules, ix) {
			res.Rules = append(res.Rules, agent.SettingsRule{File: l.Rule.File, Line: l.Rule.Line, Column: l.Rule.Column,
				Key: l.Rule.Key, Index: l.Rule.Index, Rule: l.Rule.Literal, Reason: string(l.Reason), Owners: l.Owners,
				Registered: l.Registered, Ignored: l.Rule.Ignored, VarDependent: l.VarDependent})
		}
	}
	return res
}
