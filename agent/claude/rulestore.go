package claude

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/store"
)

// KindRules is a Claude Code rule file as a store: settings.json, settings.local.json,
// managed-settings.json, or ~/.claude.json (its projects[*].allowedTools). Its sites are the
// rule strings (store.SiteRule). It is rewritten only by fix --rules.
const KindRules store.Kind = "claude-rules"

// AgentRules is the Snapshot.Agent of a rule file.
const AgentRules = "claude-rules"

// RuleStore is one rule file as a store: Scan lists its rules as sites, Apply splices new rule
// strings into the JSON string tokens (every other byte, comments and formatting included,
// stays), Restore puts the backup back. Backups, journal and undo are the run machinery's.
type RuleStore struct {
	path  string
	scope permission.ClaudeScope
}

// OpenRules returns the rule file at path; scope says how it is read (ScopeLegacy: a
// ~/.claude.json, whose projects[*].allowedTools are the rules; any other scope: the
// permissions lists).
func OpenRules(path string, scope permission.ClaudeScope) *RuleStore {
	return &RuleStore{path: path, scope: scope}
}

// Ref names the store.
func (s *RuleStore) Ref() store.Ref { return store.Ref{Path: s.path, Kind: KindRules} }

// RuleSnapshot is what a rule file's snapshot keeps (RuleSnapshotOf): the parsed rules, in
// site order.
type RuleSnapshot struct {
	Scope permission.ClaudeScope
	Rules []Rule
}

// RuleSnapshotOf returns the *RuleSnapshot a RuleStore's scan kept in snap, or nil when snap
// is not the snapshot of a rule file.
func RuleSnapshotOf(snap *store.Snapshot) *RuleSnapshot { return store.StateOf[RuleSnapshot](snap) }

// Scan reads the file: one SiteRule site per rule string (Path "permissions.deny[0]", Raw
// the exact token). A file that is not JSON is an error-level Problem and the file is not
// writable.
func (s *RuleStore) Scan(ctx context.Context, opt store.ScanOptions) (*store.Snapshot, error) {
	// Opened as every store is (fileio.OpenStore: no FIFO waited on, as root no link out of
	// its owner's reach), and its state is the file read's.
	f, fi, err := fileio.OpenStore(s.path, store.FileID{})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.path, err)
	}
	sum := sha256.Sum256(data)
	snap := &store.Snapshot{Ref: s.Ref(), Agent: AgentRules, Records: 1,
		State: store.FileState{Size: int64(len(data)), Mode: fi.Mode(), ModTime: fi.ModTime(), SHA256: hex.EncodeToString(sum[:])}}
	if opt.Progress != nil {
		opt.Progress(int64(len(data)))
	}
	var rules []Rule
	if s.scope == permission.ClaudeScopeLegacy {
		g, err := ParseGlobalConfig(s.path, data)
		if err != nil {
			return notJSON(snap, s.scope, err), nil
		}
		dirs := make([]string, 0, len(g.Projects))
		for d := range g.Projects {
			dirs = append(dirs, d)
		}
		sort.Strings(dirs)
		for _, d := range dirs {
			rules = append(rules, g.Projects[d].AllowedTools...)
		}
	} else {
		f, err := ParseRuleFile(s.path, data, s.scope)
		if err != nil {
			return notJSON(snap, s.scope, err), nil
		}
		rules = f.Rules
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].Offset < rules[j].Offset })
	for _, r := range rules {
		snap.Sites = append(snap.Sites, store.Site{Loc: store.Loc{Line: int64(r.Line), Offset: int64(r.Offset)}, Kind: store.SiteRule,
			Path: fmt.Sprintf("%s[%d]", r.Key, r.Index), Name: r.Text, Raw: append([]byte(nil), data[r.Offset:r.End]...)})
	}
	store.SetState(snap, &RuleSnapshot{Scope: s.scope, Rules: rules})
	return snap, nil
}

// notJSON marks a rule file that does not parse: not writable, one error problem (err names
// file:line:column), no sites, and still its *RuleSnapshot (with no rules; RuleSnapshotOf), as every
// snapshot of a RuleStore has one.
func notJSON(snap *store.Snapshot, scope permission.ClaudeScope, err error) *store.Snapshot {
	snap.NotWritable = "not valid JSON"
	store.SetState(snap, &RuleSnapshot{Scope: scope})
	snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevError, Reason: err.Error()})
	return snap
}

// Apply replaces the rule strings of edits (their JSON string tokens, checked byte for byte)
// through the crash-safe file rewrite, recording the byte edits for undo.
func (s *RuleStore) Apply(ctx context.Context, snap *store.Snapshot, edits []store.Edit, opt store.ApplyOptions) (*store.Change, error) {
	if snap.NotWritable != "" {
		return nil, fmt.Errorf("rewrite %s: %w: %s", s.path, store.ErrNotWritable, snap.NotWritable)
	}
	sorted := append([]store.Edit(nil), edits...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Site.Loc.Offset < sorted[j].Site.Loc.Offset })
	sites := jsonl.Sites(sorted)
	commit := opt.BeforeCommit
	opt.BeforeCommit = func(ch *store.Change) error {
		ch.Sites = sites
		if commit != nil {
			return commit(ch)
		}
		return nil
	}
	ch, err := fileio.RewriteFile(ctx, s.path, snap.State, jsonl.Splice(sorted), opt)
	if ch != nil {
		ch.Ref = s.Ref()
		ch.Edits = len(sorted)
	}
	return ch, err
}

// Restore puts the backup of ch back (fileio.RestoreFile).
func (s *RuleStore) Restore(ctx context.Context, ch *store.Change, force bool) error {
	return fileio.RestoreFile(ctx, s.path, ch, force)
}

// IsRuleFile checks that path still reads as a rule file (a JSON object), for undo: nil, or
// what it is instead.
func IsRuleFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if _, err := parseJSON(path, data); err != nil {
		return fmt.Errorf("it is not one now (%v)", err)
	}
	return nil
}
