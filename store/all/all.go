// Package all lists every store backend in one place (no self-registration): Detect picks the
// backend of a file found by a walk, Open reopens a store recorded in a run manifest.
//
// all imports the store backends and nothing above them.
package all

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/claude"
	"github.com/sessionfix/sessionfix/store/jsonl"
	"github.com/sessionfix/sessionfix/store/sqlite"
)

// HeadSize is how many leading bytes Detect wants to see.
const HeadSize = 4096

// Detection is the verdict on one file.
type Detection struct {
	// Store is the backend to read it with, nil when the file is not a store.
	Store store.Store
	// Unsupported says why a file that looks like a store cannot be read ("zstd-compressed").
	Unsupported string
	// NotStore says why a file that looked like a candidate is not a store (a SQLite database
	// no profile describes); discovery reports it for a file named explicitly.
	NotStore string
	// Unreadable says why a store could not even be opened (an error: the run is partial).
	Unreadable string
	// Warning says that a forced agent (Options.Agent) goes against the file's content: the
	// file is read as that agent's store although it looks like another one (Store set), or it
	// is left out although it looks like another agent's store (Store nil). Discovery reports
	// it, so a wrong --agent never gives a silent all-clear (issue 8 item 11).
	Warning string
}

// Options tunes detection: the agent a walk is restricted to (DetectAs; "" = any) and what some
// backends need besides a path, the SQLite busy timeout and a user profile (--busy-timeout,
// --profile). The zero value is the defaults.
type Options struct {
	Agent  string
	SQLite sqlite.Options
}

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Agents a walk can be restricted to (DetectAs); "" means any.
const (
	AgentQwen   = "qwen"
	AgentCodex  = "codex"
	AgentClaude = "claude"
)

// Agents lists the agent names DetectAs accepts, for usage messages.
var Agents = []string{AgentQwen, AgentCodex, AgentClaude}

// Detect picks the backend for path from its name and head (its first bytes, up to HeadSize).
func Detect(path string, head []byte) Detection {
	return DetectWith(context.Background(), path, head, Options{})
}

// DetectAs is Detect for one agent's stores ("" = any agent, by name and content):
//   - "codex" reads every *.jsonl as a Codex rollout (except the Codex home's history.jsonl and
//     session_index.jsonl), whatever its first line, and no Qwen Code store;
//   - "qwen" never takes a Codex rollout;
//   - "claude" reads every *.jsonl (but a Qwen usage_record.jsonl) as a Claude Code session,
//     with a warning when its first line says otherwise; without --agent claude a Claude Code
//     session (jsonl.LooksLikeClaudeSession) is one, and other --agent values leave it out with
//     a warning.
//
// A zstd-compressed store (*.zst or the zstd magic) is reported as Unsupported, never parsed.
func DetectAs(agent, path string, head []byte) Detection {
	return DetectWith(context.Background(), path, head, Options{Agent: agent})
}

// DetectWith is DetectAs with backend options. A SQLite database is recognised by its header,
// whatever its name, and opened read-only to match its schema against the profiles; with an
// Agent, only a profile of that agent takes it. ctx bounds the database's opening (a lock
// wait of up to the busy timeout): cancelled, the database is Unreadable with ctx's error.
func DetectWith(ctx context.Context, path string, head []byte, opt Options) Detection {
	agent := opt.Agent
	if sqlite.IsDatabase(head) {
		st, err := sqlite.Detect(ctx, path, opt.SQLite)
		var np *sqlite.NoProfileError
		switch {
		case errors.As(err, &np):
			return Detection{NotStore: np.Reason()}
		case err != nil:
			reason := "SQLite database that cannot be read: " + err.Error()
			if strings.Contains(err.Error(), "readonly database") {
				reason += " (a WAL database needs its -shm file: read it where its directory is writable, or from a copy)"
			}
			return Detection{Unreadable: reason}
		case agent != "" && st.Profile() != nil && st.Profile().Agent != agent:
			why := fmt.Sprintf("SQLite store of %s (profile %s), not of %s", st.Profile().Agent, st.Profile().Name, agent)
			return Detection{NotStore: why, Warning: why + ": not read with --agent " + agent}
		}
		return Detection{Store: st}
	}
	base := filepath.Base(path)
	if strings.HasSuffix(path, ".zst") || bytes.HasPrefix(head, zstdMagic) {
		switch {
		case agent != AgentQwen && (jsonl.IsCodexRolloutName(base) || agent == AgentCodex && strings.HasSuffix(base, ".jsonl.zst")):
			if _, err := os.Stat(strings.TrimSuffix(path, ".zst")); err == nil {
				return Detection{Unsupported: "zstd-compressed Codex rollout next to its plain .jsonl (Codex reads the plain file): not parsed"}
			}
			return Detection{Unsupported: "zstd-compressed Codex rollout: reported, not parsed; its tool names are not checked (decompress it with zstd -d, keep only the .jsonl, and run again to repair it)"}
		case strings.Contains(path, ".json"):
			return Detection{Unsupported: "zstd-compressed store: reported, not parsed"}
		}
		return Detection{}
	}
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	first = bytes.TrimPrefix(first, []byte("\xEF\xBB\xBF"))
	var p *jsonl.Profile
	auto := jsonl.Detect(path, first)
	if jsonl.LooksLikeClaudeSession(path, first) {
		auto = jsonl.ClaudeSession
	}
	warning := ""
	switch agent {
	case AgentClaude:
		if strings.HasSuffix(base, ".jsonl") && auto != jsonl.QwenUsage {
			p = jsonl.ClaudeSession
			switch {
			case auto != nil && auto != jsonl.ClaudeSession:
				warning = fmt.Sprintf("read as a Claude Code session (--agent claude), but it looks like a %s store (%s): its tool names are not where Claude Code keeps them; drop --agent or pass --agent %s", auto.Agent, auto.Kind, auto.Agent)
			case auto == nil:
				warning = "read as a Claude Code session (--agent claude), but it does not look like one (no Claude Code first line)"
			}
		} else if auto != nil {
			warning = fmt.Sprintf("looks like a %s store (%s): not read with --agent claude (drop --agent or pass --agent %s)", auto.Agent, auto.Kind, auto.Agent)
		}
	case AgentCodex:
		if strings.HasSuffix(base, ".jsonl") && !jsonl.IsCodexCompanion(base) {
			p = jsonl.CodexRollout
			switch {
			case auto != nil && auto != jsonl.CodexRollout:
				warning = fmt.Sprintf("read as a Codex rollout (--agent codex), but it looks like a %s store (%s): its tool names are not where Codex keeps them; drop --agent or pass --agent %s", auto.Agent, auto.Kind, auto.Agent)
			case auto == nil:
				warning = "read as a Codex rollout (--agent codex), but it does not look like one (not named rollout-*.jsonl, no session_meta first line)"
			}
		}
	default:
		p = auto
		switch {
		case agent == AgentQwen && p == jsonl.CodexRollout:
			p = nil
			warning = "looks like a Codex rollout: not read with --agent qwen (drop --agent or pass --agent codex)"
		case agent != "" && p == jsonl.ClaudeSession:
			p = nil
			warning = fmt.Sprintf("looks like a Claude Code session: not read with --agent %s (drop --agent or pass --agent claude)", agent)
		}
	}
	if p != nil {
		return Detection{Store: jsonl.Open(path, p), Warning: warning}
	}
	return Detection{Warning: warning}
}

// ReadHead returns up to HeadSize leading bytes of the file at path.
func ReadHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, HeadSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:n], nil
}

// Open returns the store recorded as ref (for undo), with default options. It does not touch the
// store.
func Open(ref store.Ref) (store.Store, error) { return OpenWith(ref, Options{}) }

// OpenWith is Open with backend options.
func OpenWith(ref store.Ref, opt Options) (store.Store, error) {
	if ref.Kind == store.KindSQLite {
		return sqlite.Open(ref.Path, opt.SQLite), nil
	}
	if ref.Kind == claude.KindRules {
		return claude.OpenRules(ref.Path, ""), nil
	}
	if p := jsonl.ProfileByKind(ref.Kind); p != nil {
		return jsonl.Open(ref.Path, p), nil
	}
	return nil, fmt.Errorf("open %s: unknown store kind %q", ref.Path, ref.Kind)
}

// Reopen is OpenWith for undo, which must not take a run's word for what a file is: when a file
// exists at ref.Path it must still be detected (DetectWith, by name and content) as a store of
// ref.Kind, else an error says what it is instead. A missing file is opened as recorded.
func Reopen(ctx context.Context, ref store.Ref, opt Options) (store.Store, error) {
	head, err := ReadHead(ref.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return OpenWith(ref, opt)
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", ref.Path, err)
	}
	if ref.Kind == claude.KindRules {
		// Claude Code rule files are stores only for fix --rules (never detected): a rule
		// file is still one when it is a JSON object.
		if err := claude.IsRuleFile(ref.Path); err != nil {
			return nil, fmt.Errorf("%s: the run recorded a Claude Code rule file, but %v: not restored", ref.Path, err)
		}
		return OpenWith(ref, opt)
	}
	switch ref.Kind {
	case store.KindCodexRollout:
		opt.Agent = AgentCodex // --agent codex reads any *.jsonl as a rollout
	case jsonl.KindClaudeSession:
		opt.Agent = AgentClaude // likewise --agent claude for a Claude Code session
	}
	d := DetectWith(ctx, ref.Path, head, opt)
	switch {
	case d.Store != nil && d.Store.Ref().Kind == ref.Kind:
		return OpenWith(ref, opt)
	case d.Store != nil:
		return nil, fmt.Errorf("%s: the run recorded a %s store, but the file is now a %s store: not restored", ref.Path, ref.Kind, d.Store.Ref().Kind)
	case d.Unreadable != "":
		return nil, fmt.Errorf("%s: %s", ref.Path, d.Unreadable)
	}
	return nil, fmt.Errorf("%s: the run recorded a %s store, but the file is not one: not restored", ref.Path, ref.Kind)
}
