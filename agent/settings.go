package agent

import (
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
)

// Settings is an agent's settings pass of scan and fix (pipeline.ScanSettings): settings
// files are read, never rewritten; the rules they hold in legacy spellings are reported.
type Settings struct {
	// Files are the settings files a directory PATH may hold (dir/settings.json, …: paths to
	// try, not checked to exist).
	Files func(dir string) []string
	// Scan reads each file of paths (env expands variables, home is the home directory) and
	// lists its rules in legacy spellings against the inventory index ix (nil = none). A file
	// that cannot be read or parsed is in Errors (its error names line and column); the
	// others are still read and listed in Files.
	Scan func(paths []string, env mcpconfig.Env, home string, ix *mcpname.Index) SettingsResult
}

// SettingsResult is the result of Settings.Scan.
type SettingsResult struct {
	Files  []string
	Rules  []SettingsRule
	Errors []FileError
}

// FileError is a file Settings.Scan could not read, and why.
type FileError struct {
	Path string
	Err  error
}

// SettingsRule is one legacy-spelled settings rule (scan --format json "settings_rules":
// report.SettingsRuleRow holds the same fields). Line and Column are 1-based; Key is the
// settings key holding the rule and Index its place there (0-based; -1: not a list entry);
// Rule the literal;
// Reason why it is legacy; Owners the raw identities it stands for; Registered the current
// names (empty for a pattern); Ignored why the rule has no effect ("" = it has);
// VarDependent: the rule uses $VAR and its current name is not shown.
type SettingsRule struct {
	File               string
	Line, Column       int
	Key                string
	Index              int
	Rule, Reason       string
	Owners, Registered []string
	Ignored            string
	VarDependent       bool
}
