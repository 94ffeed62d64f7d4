package agent

import (
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// The capabilities: optional interfaces of a room's value (Agent). The engine finds each by
// type assertion (agent/all and the commands); a room pins the ones it implements with
// var _ agent.X = (*T)(nil). An agent without one has no such thing.

// HomeFinder is an agent whose homes are recognised by their files.
type HomeFinder interface {
	// HomeOf returns the agent home a path lies in, recognised by the files only such a home
	// holds (a copied ~/.acme is planned with its own config), or "" when it lies in none.
	// It looks at the file system.
	HomeOf(path string) string
}

// LinkFollower is an agent some of whose symbolic links discovery follows.
type LinkFollower interface {
	// FollowLink says why discovery follows the symbolic link at path (a directory of the
	// agent's home moved to another disk and linked back: "an Acme home's sessions/"), or ""
	// when it does not (links are not followed otherwise). It looks at the file system.
	FollowLink(path string) string
}

// Forcer is an agent that decides itself what --agent <ID> reads. Without it, a file is read
// when detection picked one of the agent's profiles, else left out with a warning naming the
// agent detection picked.
type Forcer interface {
	// ForceJSONL is the profile a file is read with under --agent <ID>, given what detection
	// would have picked (auto, of any agent, or nil): the profile (nil: the file is left out)
	// and a warning when that goes against the file's content.
	ForceJSONL(path string, firstLine []byte, auto *jsonl.Profile) (p *jsonl.Profile, warning string)
}

// Compressor is an agent some of whose stores may be compressed.
type Compressor interface {
	// Compressed says why a compressed file (*.zst, or the zstd magic) that is one of the
	// agent's stores is not read ("zstd-compressed Acme session: …"); "" when it is not the
	// agent's. forced: --agent names this agent. It may stat paths (the plain file beside it).
	Compressed(path string, forced bool) string
}

// SettingsOwner is an agent with config directories whose settings.json is its own.
type SettingsOwner interface {
	// OwnsSettings reports whether dir is one of the agent's config directories whose
	// settings.json is in the agent's own format: scan's settings pass (which reads the
	// default agent's settings files) leaves it alone. It looks at the file system.
	OwnsSettings(dir string) bool
}

// FileKnower is an agent with files that are no stores but a PATH may name.
type FileKnower interface {
	// KnownFile says what a file of the agent's that is not a store is, and which command
	// reads it ("Acme settings (permission rules): read by sessionfix audit --agent acme"), or
	// "" when path is no such file. scan and check report a PATH it recognises as info, not as
	// an unknown store. It may look at the file system.
	KnownFile(path string) string
}

// Relocator is an agent with a legacy layout its newest release no longer opens.
type Relocator interface {
	// Relocate says where the agent's newest release opens a store of the agent that lies
	// where that release no longer looks (a legacy layout: Acme 2 reads
	// sessions/<id>/log.jsonl, Acme 1 wrote sessions/<id>.jsonl): the path to move it to and
	// why, in words for the plan ("Acme 2 resumes only sessions/<id>/log.jsonl"); "" when the
	// store is where it belongs. fix --apply --move-legacy renames such a store there (the
	// run records the move, undo moves it back). Pure: it reads the path only.
	Relocate(ref store.Ref) (to, why string)
}

// Classifier is an agent whose Namer gives classes beyond mcpname.Classes.
type Classifier interface {
	// Classes describes those classes, in report order.
	Classes() []naming.ClassInfo
}

// TextSiter is an agent with site kinds whose names reach the model as text (a search query,
// a listing of deferred tools), not as tool names: a provider's tool-name rule does not apply
// to them (check skips them; their names are checked where they are tool names).
type TextSiter interface {
	TextSites() []store.SiteKind
}

// SentNamer is an agent that stores a call as a namespace member and a name (the sites of one
// Site.Group, the namespace's Field "namespace").
type SentNamer interface {
	// SentName is the one name a provider sees of such a call: check tests that name.
	SentName(namespace, name string) string
}

// Redispatcher is an agent whose stored calls check looks up as the agent does (issue 13 item
// 3). Without it, the agent's calls are not checked.
type Redispatcher interface {
	// Redispatches are the findings of one store plan of the agent's, in plan order, one per
	// distinct (stored call, called identity) with its count; only classes redispatch and
	// ambiguous. It reads in only (pure).
	Redispatches(in naming.DispatchInput) []naming.Redispatch
}

// SentAser is an agent whose releases send a provider something other than a stored call
// name (check --<agent>-version RELEASE).
type SentAser interface {
	// SentAs says what the release that resumes the sessions sends instead of a stored call
	// name: nil Sending when that release sends the stored bytes; an error when release does
	// not parse.
	SentAs(release string) (*Sending, error)
	// SentAsOption is check's flag naming the release SentAs takes (Value: its default,
	// "stored": the stored bytes; Hint: what a bad value should be, for the usage error).
	// check's result holds one release: when several agents' releases are given, the last in
	// agent/all's order is checked.
	SentAsOption() *Option
}

// Sending is what one agent release sends instead of the stored name of a call.
type Sending struct {
	// Sent returns the name sent for the stored name (units: its exact UTF-16 units when it
	// holds a lone surrogate, else nil); ok false: the stored name is sent.
	Sent func(name string, units []uint16) (sent string, ok bool)
	// Verbatim lists the providers (provider IDs) that still receive the stored name.
	Verbatim []string
}

// Optioner is an agent with flags of its own on scan, fix and check.
type Optioner interface {
	// Options are those flags, in --help order; their values reach Prepare as
	// PrepareInput.Options.
	Options() []Option
}

// OncePreparer is an agent whose Prepare is expensive (--discover starts servers): a command
// that builds several pipelines (an interactive fix re-plans after its prompt) reuses the
// first Prepare's result when PrepareOnce is true.
type OncePreparer interface {
	PrepareOnce() bool
}

// Auditor is an agent whose permission rules sessionfix audit --agent <ID> audits.
type Auditor interface {
	Audit() *Audit
}

// RuleFixer is an agent with a rule-file migration of fix --rules.
type RuleFixer interface {
	RuleFix() *RuleFix
}

// SettingsPasser is an agent with a settings pass of scan and fix (only agent/all.Default's
// is run).
type SettingsPasser interface {
	Settings() *Settings
}

// Helper is an agent sessionfix's --help texts name (Help). Without it they do not.
type Helper interface {
	Help() *Help
}
