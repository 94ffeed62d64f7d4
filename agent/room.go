package agent

import (
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/naming"
)

// The capabilities most rooms implement the same way — a package value returned, a package
// function called — as types a room's agent type embeds: the room's type lists what it
// implements (its struct's embedded fields), its Agent value says with what, and each
// capability is still pinned in the room (var _ agent.Auditor = (*room)(nil)). A capability
// that is more than that stays a method of the room's own.

// Helped gives a room's type Helper: Help returns Of.
type Helped struct{ Of *Help }

// Help is Of.
func (h Helped) Help() *Help { return h.Of }

// Audited gives a room's type Auditor: Audit returns Of.
type Audited struct{ Of *Audit }

// Audit is Of.
func (a Audited) Audit() *Audit { return a.Of }

// RuleFixed gives a room's type RuleFixer: RuleFix returns Of.
type RuleFixed struct{ Of *RuleFix }

// RuleFix is Of.
func (r RuleFixed) RuleFix() *RuleFix { return r.Of }

// Classed gives a room's type Classifier: Classes returns Of.
type Classed struct{ Of []naming.ClassInfo }

// Classes is Of.
func (c Classed) Classes() []naming.ClassInfo { return c.Of }

// Optioned gives a room's type Optioner: Options returns Of.
type Optioned struct{ Of []Option }

// Options is Of.
func (o Optioned) Options() []Option { return o.Of }

// HomeFunc gives a room's type HomeFinder: HomeOf calls it.
type HomeFunc func(path string) string

// HomeOf is f(path).
func (f HomeFunc) HomeOf(path string) string { return f(path) }

// KnownFileFunc gives a room's type FileKnower: KnownFile calls it.
type KnownFileFunc func(path string) string

// KnownFile is f(path).
func (f KnownFileFunc) KnownFile(path string) string { return f(path) }

// LinkFunc gives a room's type LinkFollower: FollowLink calls it.
type LinkFunc func(path string) string

// FollowLink is f(path).
func (f LinkFunc) FollowLink(path string) string { return f(path) }

// ForceFunc gives a room's type Forcer: ForceJSONL calls it.
type ForceFunc func(path string, firstLine []byte, auto *jsonl.Profile) (*jsonl.Profile, string)

// ForceJSONL is f(path, firstLine, auto).
func (f ForceFunc) ForceJSONL(path string, firstLine []byte, auto *jsonl.Profile) (*jsonl.Profile, string) {
	return f(path, firstLine, auto)
}

// RedispatchFunc gives a room's type Redispatcher: Redispatches calls it.
type RedispatchFunc func(in naming.DispatchInput) []naming.Redispatch

// Redispatches is f(in).
func (f RedispatchFunc) Redispatches(in naming.DispatchInput) []naming.Redispatch { return f(in) }
