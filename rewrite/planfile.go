package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// A plan file is the reviewed plan as data (docs/plan.md): `fix --plan-out FILE` writes it,
// `fix --apply --plan FILE` applies exactly it, like Terraform's `plan -out` and `apply
// PLANFILE`. It names every store that has something to rewrite, with the store's fingerprint
// when it was planned and the byte edits planned for it. Applying it, each store is read
// again, and is rewritten only when its fingerprint is unchanged and planning it again gives
// exactly the planned edits; a store that changed is refused (PlanChangedError, in use: exit
// 4), a store whose edits differ is refused (PlanMismatchError), the others are rewritten.
//
// A plan file is untrusted input: ReadPlanFile bounds its size and counts, checks every field
// (absolute clean paths, known kinds, fingerprints' shapes, JSON string tokens, names), and
// refuses a document whose checksum (sealed like a run manifest, see runlog.SealDocument) does not match.

// PlanFormat and PlanVersion identify a plan file.
const (
	PlanFormat  = "sessionfix-plan"
	PlanVersion = 1
)

// Bounds of a plan file ReadPlanFile accepts.
const (
	MaxPlanBytes     = 256 << 20 // the whole document
	MaxPlanStores    = 1_000_000
	MaxPlanEdits     = 10_000_000 // over all stores
	maxPlanPath      = 4096       // bytes of a store path
	maxPlanToken     = 64 << 10   // bytes of an old token or a new name
	maxPlanOptString = 4096
	// MaxPlanValues bounds the values of a repeatable agent member of options.
	MaxPlanValues = 1000
)

// PlanFile is the document `fix --plan-out` writes (docs/plan.md).
type PlanFile struct {
	// Checksum seals the document like Manifest.Checksum (first member).
	Checksum string    `json:"checksum"`
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	Created  time.Time `json:"created"`
	// Options are the naming options the plan was made with; apply plans again with them.
	Options PlanOptions `json:"options"`
	// Stores are the stores with something to rewrite, sorted by path.
	Stores []PlannedStore `json:"stores"`
}

// PlanOptions are the naming flags of `fix` recorded in a plan (paths absolute). The generic
// flags are fields; the agents' own options are Agents, members whose names and kinds the
// rooms declare (agent.Option.Plan; PlanMember). MarshalJSON writes the members in the order of
// PlanGenericMembers with each agent member right after its PlanMember.After, so a plan keeps
// the bytes older releases wrote; UnmarshalJSON reads every member strictly (a member given
// twice or of the wrong JSON type is a *PlanOptionError) and keeps the agents' members as they
// are written, for ReadPlanFile to check against the declared members.
type PlanOptions struct {
	KeepTruncated bool   `json:"keep_truncated,omitempty"`
	RewriteLossy  bool   `json:"rewrite_lossy,omitempty"`
	Inventory     string `json:"inventory,omitempty"`
	Agent         string `json:"agent,omitempty"`
	Discover      bool   `json:"discover,omitempty"`
	Profile       string `json:"profile,omitempty"`
	// BusyTimeout is the SQLite --busy-timeout, as a Go duration ("5s").
	BusyTimeout string `json:"busy_timeout,omitempty"`
	// Agents are the agents' options recorded (AgentValues, SetAgentValues): in the declared
	// members' order once ReadPlanFile checked them, else in the document's order.
	Agents []PlanValue `json:"-"`
}

// AgentValues are the recorded values of the agent option whose plan member is key
// (agent.Option.Plan: a bool set is ["true"], a single-valued option its one value), nil when
// it is not recorded.
func (o PlanOptions) AgentValues(key string) []string {
	for _, v := range o.Agents {
		if v.Key == key {
			return v.Values
		}
	}
	return nil
}

// SetAgentValues records vals (as AgentValues returns them; a single-valued member keeps the
// last, a bool member is set when the last is "true") under member m, replacing what m's key
// held.
func (o *PlanOptions) SetAgentValues(m PlanMember, vals []string) {
	if !m.Repeatable && len(vals) > 1 {
		vals = vals[len(vals)-1:]
	}
	for i := range o.Agents {
		if o.Agents[i].Key == m.Key {
			o.Agents[i] = PlanValue{PlanMember: m, Values: vals}
			return
		}
	}
	o.Agents = append(o.Agents, PlanValue{PlanMember: m, Values: vals})
}

// PlannedStore is one store of a plan: what it was when planned and what to change in it.
type PlannedStore struct {
	Path string     `json:"path"`
	Kind store.Kind `json:"kind"`
	// Profile is the SQLite profile the database was read with ("" for files).
	Profile     string        `json:"profile,omitempty"`
	Fingerprint Fingerprint   `json:"fingerprint"`
	Names       int           `json:"names"`
	Edits       []PlannedEdit `json:"edits"`
}

// Fingerprint is what a store looked like when it was planned (PlanBuilder): size (with a
// SQLite database's -wal), modification time, the content checksum the backend took (files:
// store.FileState.Fingerprint or SHA256; databases have none), and a SHA-256 over every name
// site the scan found (location and exact token), which also covers a database's rows.
type Fingerprint struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	Content string    `json:"content,omitempty"`
	Sites   string    `json:"sites"`
}

// PlannedEdit is one planned byte edit: the JSON string token Old at Offset (of the line, of
// the file, or of the column value of Row) becomes the name New. Old is empty for an inserted
// member (a call's "namespace"): Field names it.
type PlannedEdit struct {
	Line   int64  `json:"line,omitempty"`
	Row    string `json:"row,omitempty"`
	Offset int64  `json:"offset"`
	Site   string `json:"site"`
	Path   string `json:"path,omitempty"`
	Field  string `json:"field,omitempty"`
	Group  string `json:"group,omitempty"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// PlanBuilder records one store for a plan file, or checks it against one, from its plan given
// whole or batch by batch (a store planned in parts, StoreResult.Batch): Add each part's plan
// in order, then Done (or PlannedStore.CheckBuilt) with the store's final snapshot.
type PlanBuilder struct {
	h     hash.Hash
	edits []PlannedEdit
	names int
}

// NewPlanBuilder starts a builder.
func NewPlanBuilder() *PlanBuilder { return &PlanBuilder{h: sha256.New()} }

// Add adds one part of the store's plan: its sites (to the fingerprint) and its edits.
func (b *PlanBuilder) Add(sp *StorePlan) {
	b.addSites(sp.Snap.Sites)
	edits := sp.Edits()
	b.edits = append(b.edits, plannedEdits(edits)...)
	b.names += NameCount(edits)
}

func (b *PlanBuilder) addSites(sites []store.Site) {
	var n [8]byte
	field := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		b.h.Write(n[:])
		b.h.Write([]byte(s))
	}
	for _, s := range sites {
		binary.BigEndian.PutUint64(n[:], uint64(s.Loc.Line))
		b.h.Write(n[:])
		binary.BigEndian.PutUint64(n[:], uint64(s.Loc.Offset))
		b.h.Write(n[:])
		field(s.Loc.Row)
		field(s.Field)
		field(string(s.Raw))
	}
}

func (b *PlanBuilder) fingerprint(snap *store.Snapshot) Fingerprint {
	fp := Fingerprint{Size: snap.State.Size, ModTime: snap.State.ModTime.UTC(), Content: snap.State.Fingerprint}
	if fp.Content == "" && snap.State.SHA256 != "" {
		fp.Content = "sha256:" + snap.State.SHA256
	}
	fp.Sites = "sha256:" + hex.EncodeToString(b.h.Sum(nil))
	return fp
}

// Done is the store as a plan records it; snap is its final snapshot (with its state), profile
// its SQLite profile name ("" for files). ok is false when nothing is to be rewritten (such a
// store is not in a plan).
func (b *PlanBuilder) Done(snap *store.Snapshot, profile string) (ps PlannedStore, ok bool) {
	if len(b.edits) == 0 {
		return ps, false
	}
	return PlannedStore{Path: snap.Ref.Path, Kind: snap.Ref.Kind, Profile: profile, Fingerprint: b.fingerprint(snap),
		Names: b.names, Edits: b.edits}, true
}

// plannedEdits are the edits of sp as they are recorded in a plan.
func plannedEdits(edits []store.Edit) []PlannedEdit {
	out := make([]PlannedEdit, len(edits))
	for i, e := range edits {
		s := e.Site
		out[i] = PlannedEdit{Line: s.Loc.Line, Row: s.Loc.Row, Offset: s.Loc.Offset, Site: string(s.Kind), Path: s.Path,
			Field: s.Field, Group: s.Group, Old: string(s.Raw), New: e.New}
	}
	return out
}

// ErrPlanChanged means a store changed since the plan was made: it is not rewritten (in use,
// exit 4). It wraps store.ErrInUse.
var ErrPlanChanged = errors.New("changed since it was planned")

// PlanChangedError names the store and what changed.
type PlanChangedError struct {
	Path   string
	Reason string
}

func (e *PlanChangedError) Error() string {
	return fmt.Sprintf("%s: %s (%s): not rewritten; make a new plan", e.Path, ErrPlanChanged, e.Reason)
}

// Is makes errors.Is(err, store.ErrInUse) and errors.Is(err, ErrPlanChanged) true.
func (e *PlanChangedError) Is(target error) bool {
	return target == ErrPlanChanged || target == store.ErrInUse
}

// ErrPlanMismatch means planning a store again (same content) does not give the planned edits
// (the inventory, an agent's config or an MCP server's tools changed, or the plan was edited):
// the store is not rewritten.
var ErrPlanMismatch = errors.New("planning it again does not give the planned edits")

// PlanMismatchError names the store and the first edit that differs.
type PlanMismatchError struct {
	Path   string
	Reason string
}

func (e *PlanMismatchError) Error() string {
	return fmt.Sprintf("%s: %s (%s): not rewritten; make a new plan", e.Path, ErrPlanMismatch, e.Reason)
}

// Unwrap returns ErrPlanMismatch.
func (e *PlanMismatchError) Unwrap() error { return ErrPlanMismatch }

// Check compares a store planned again now (sp, from a snapshot scanned with Hash) with ps:
// nil when its fingerprint and edits are the planned ones; a *PlanChangedError when the store
// changed; a *PlanMismatchError when the same content now plans to other edits.
func (ps *PlannedStore) Check(sp *StorePlan) error {
	b := NewPlanBuilder()
	b.Add(sp)
	return ps.CheckBuilt(b, sp.Snap)
}

// CheckBuilt is Check for a store planned now in parts: b holds its parts, snap is its final
// snapshot.
func (ps *PlannedStore) CheckBuilt(b *PlanBuilder, snap *store.Snapshot) error {
	if snap.Ref.Path != ps.Path || snap.Ref.Kind != ps.Kind {
		return &PlanChangedError{Path: ps.Path, Reason: fmt.Sprintf("it is now a %s store at %s, planned as %s", snap.Ref.Kind, snap.Ref.Path, ps.Kind)}
	}
	now := b.fingerprint(snap)
	was := ps.Fingerprint
	switch {
	case now.Size != was.Size:
		return &PlanChangedError{Path: ps.Path, Reason: fmt.Sprintf("size %d bytes when planned, now %d", was.Size, now.Size)}
	case !now.ModTime.Equal(was.ModTime):
		return &PlanChangedError{Path: ps.Path, Reason: fmt.Sprintf("modified %s when planned, now %s", was.ModTime.Format(time.RFC3339Nano), now.ModTime.Format(time.RFC3339Nano))}
	case now.Content != was.Content:
		return &PlanChangedError{Path: ps.Path, Reason: fmt.Sprintf("content checksum %s when planned, now %s", orNone(was.Content), orNone(now.Content))}
	case now.Sites != was.Sites:
		return &PlanChangedError{Path: ps.Path, Reason: "its name sites are not the planned ones"}
	}
	got := b.edits
	for i := range max(len(got), len(ps.Edits)) {
		switch {
		case i >= len(got):
			e := ps.Edits[i]
			return &PlanMismatchError{Path: ps.Path, Reason: fmt.Sprintf("planned %s → %s at %s, now kept", e.Old, e.New, e.where())}
		case i >= len(ps.Edits):
			e := got[i]
			return &PlanMismatchError{Path: ps.Path, Reason: fmt.Sprintf("not planned: %s → %s at %s", e.Old, e.New, e.where())}
		case got[i] != ps.Edits[i]:
			g, w := got[i], ps.Edits[i]
			return &PlanMismatchError{Path: ps.Path, Reason: fmt.Sprintf("planned %s → %s at %s, now %s → %s at %s", w.Old, w.New, w.where(), g.Old, g.New, g.where())}
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (e PlannedEdit) where() string {
	return store.Loc{Line: e.Line, Row: e.Row, Offset: e.Offset}.String() + " offset " + fmt.Sprint(e.Offset)
}

// MarshalPlanFile returns the sealed bytes of p (indented JSON, Checksum first), with Format
// and Version set.
func MarshalPlanFile(p *PlanFile) ([]byte, error) {
	c := *p
	c.Format, c.Version, c.Checksum = PlanFormat, PlanVersion, runlog.SealPlaceholder
	if c.Stores == nil {
		c.Stores = []PlannedStore{}
	}
	for i := range c.Stores {
		if c.Stores[i].Edits == nil {
			c.Stores[i].Edits = []PlannedEdit{}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if !runlog.SealDocument(b) {
		return nil, errors.New("plan: checksum is not the first member")
	}
	return b, nil
}

// PlanFileError says why a plan file was refused: where in it, and why. Nothing is applied.
type PlanFileError struct {
	File   string
	Where  string // "", "stores[2]", "stores[2].edits[0].new"
	Reason string
}

func (e *PlanFileError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("plan %s refused: %s; nothing was changed", e.File, e.Reason)
	}
	return fmt.Sprintf("plan %s refused: %s: %s; nothing was changed", e.File, e.Where, e.Reason)
}

var (
	contentRe = regexp.MustCompile(`^(crc32c:[0-9a-f]{8}|sha256:[0-9a-f]{64})$`)
	sitesRe   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// ReadPlanFile reads and checks the plan file named file from r: at most MaxPlanBytes, the
// checksum must match, every field must be well-formed (see PlanFile): store paths absolute,
// clean and unique, of a known kind (knownKind), fingerprints of the shape PlanBuilder
// writes, edits inside their bounds with Old a JSON string token (or empty with a Field) and
// New a name of valid UTF-8 without control characters; the options' members known
// (PlanOptions' fields and members, the agents' options a plan may record, CheckAgents), each
// once and of its JSON type. Any failure is a *PlanFileError.
func ReadPlanFile(file string, r io.Reader, knownKind func(store.Kind) bool, members []PlanMember) (*PlanFile, error) {
	bad := func(where, format string, args ...any) error {
		return &PlanFileError{File: file, Where: where, Reason: fmt.Sprintf(format, args...)}
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxPlanBytes+1))
	if err != nil {
		return nil, bad("", "%v", err)
	}
	if len(b) > MaxPlanBytes {
		return nil, bad("", "larger than %d MiB", MaxPlanBytes>>20)
	}
	sealed, ok := runlog.CheckDocumentSeal(b)
	switch {
	case !sealed:
		return nil, bad("", "not a sessionfix plan (no checksum as its first member; write one with fix --plan-out)")
	case !ok:
		return nil, bad("", "its checksum does not match its content (edited or damaged)")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	p := &PlanFile{}
	if err := dec.Decode(p); err != nil {
		var oe *PlanOptionError
		if errors.As(err, &oe) {
			return nil, bad("options"+oe.at(), "%s", oe.Reason)
		}
		return nil, bad("", "not a plan document: %v", err)
	}
	if dec.More() {
		return nil, bad("", "data after the plan document")
	}
	if p.Format != PlanFormat || p.Version != PlanVersion {
		return nil, bad("", "format %q version %d, want %q version %d", p.Format, p.Version, PlanFormat, PlanVersion)
	}
	o := &p.Options
	for _, f := range []struct{ name, v string }{{"inventory", o.Inventory}, {"profile", o.Profile}} {
		if f.v != "" {
			if err := checkPlanPath(f.v); err != nil {
				return nil, bad("options."+f.name, "%v", err)
			}
		}
	}
	if err := o.CheckAgents(members); err != nil {
		return nil, bad("options"+err.at(), "%s", err.Reason)
	}
	if len(o.Agent) > maxPlanOptString || !printable(o.Agent) {
		return nil, bad("options.agent", "not an agent name")
	}
	if o.BusyTimeout != "" {
		if d, err := time.ParseDuration(o.BusyTimeout); err != nil || d < 0 {
			return nil, bad("options.busy_timeout", "not a duration: %q", o.BusyTimeout)
		}
	}
	if len(p.Stores) > MaxPlanStores {
		return nil, bad("stores", "more than %d stores", MaxPlanStores)
	}
	seen := map[string]bool{}
	edits := 0
	for i := range p.Stores {
		s := &p.Stores[i]
		at := fmt.Sprintf("stores[%d]", i)
		if err := checkPlanPath(s.Path); err != nil {
			return nil, bad(at+".path", "%v", err)
		}
		if seen[s.Path] {
			return nil, bad(at+".path", "%s is planned twice", s.Path)
		}
		seen[s.Path] = true
		if i > 0 && s.Path < p.Stores[i-1].Path {
			return nil, bad(at+".path", "stores are not sorted by path")
		}
		if !knownKind(s.Kind) {
			return nil, bad(at+".kind", "unknown store kind %q", s.Kind)
		}
		if len(s.Profile) > maxPlanOptString || !printable(s.Profile) {
			return nil, bad(at+".profile", "not a profile name")
		}
		fp := s.Fingerprint
		switch {
		case fp.Size < 0:
			return nil, bad(at+".fingerprint.size", "negative")
		case fp.ModTime.IsZero():
			return nil, bad(at+".fingerprint.mtime", "missing")
		case fp.Content != "" && !contentRe.MatchString(fp.Content):
			return nil, bad(at+".fingerprint.content", "not a checksum: %q", fp.Content)
		case !sitesRe.MatchString(fp.Sites):
			return nil, bad(at+".fingerprint.sites", "not a checksum: %q", fp.Sites)
		case len(s.Edits) == 0:
			return nil, bad(at+".edits", "no edit (a store with nothing to rewrite is not in a plan)")
		case s.Names < 1 || s.Names > len(s.Edits):
			return nil, bad(at+".names", "%d names for %d edits", s.Names, len(s.Edits))
		}
		edits += len(s.Edits)
		if edits > MaxPlanEdits {
			return nil, bad(at+".edits", "more than %d edits in the plan", MaxPlanEdits)
		}
		for j, e := range s.Edits {
			if err := checkPlannedEdit(e, fp.Size); err != nil {
				return nil, bad(fmt.Sprintf("%s.edits[%d]", at, j), "%v", err)
			}
		}
	}
	return p, nil
}

func checkPlannedEdit(e PlannedEdit, size int64) error {
	switch {
	case e.Line < 0:
		return errors.New("negative line")
	case e.Offset < 0 || e.Row == "" && e.Offset >= size:
		return fmt.Errorf("offset %d outside the store's %d bytes", e.Offset, size)
	case len(e.Row) > maxPlanToken || !printable(e.Row):
		return errors.New("not a row name")
	case len(e.Site) > maxPlanOptString || !printable(e.Site) || e.Site == "":
		return errors.New("not a site kind")
	case len(e.Path) > maxPlanToken || !printable(e.Path), len(e.Field) > maxPlanOptString || !printable(e.Field),
		len(e.Group) > maxPlanToken || !printable(e.Group):
		return errors.New("path, field or group is not printable text within bounds")
	case len(e.Old) > maxPlanToken || len(e.New) > maxPlanToken:
		return fmt.Errorf("old or new longer than %d bytes", maxPlanToken)
	case e.Old == "" && e.Field == "":
		return errors.New("an inserted member (empty old) needs a field")
	case e.Old != "" && !isStringToken(e.Old):
		return fmt.Errorf("old is not a JSON string token: %.40q", e.Old)
	case e.New == "" || !utf8.ValidString(e.New) || strings.ContainsFunc(e.New, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("new is not a name (empty, invalid UTF-8 or a control character): %.40q", e.New)
	}
	return nil
}

// isStringToken reports whether s is one JSON string token, quotes included.
func isStringToken(s string) bool {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	var v string
	return json.Unmarshal([]byte(s), &v) == nil
}

func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// checkPlanPath accepts an absolute, clean path (no "." or ".." element, no NUL) within bounds.
func checkPlanPath(p string) error {
	switch {
	case p == "" || len(p) > maxPlanPath:
		return fmt.Errorf("path empty or longer than %d bytes", maxPlanPath)
	case !filepath.IsAbs(p):
		return fmt.Errorf("not an absolute path: %q", p)
	case filepath.Clean(p) != p || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return fmt.Errorf("not a clean path (no . or .. elements): %q", p)
	case !printable(p):
		return fmt.Errorf("path holds a control character or invalid UTF-8: %q", p)
	}
	return nil
}

// Index returns the plan's stores by path.
func (p *PlanFile) Index() map[string]*PlannedStore {
	m := make(map[string]*PlannedStore, len(p.Stores))
	for i := range p.Stores {
		m[p.Stores[i].Path] = &p.Stores[i]
	}
	return m
}

// Paths returns the plan's store paths, in order.
func (p *PlanFile) Paths() []string {
	out := make([]string, len(p.Stores))
	for i, s := range p.Stores {
		out[i] = s.Path
	}
	return out
}

// Unreached returns, sorted, the paths of planned stores that are not among stores (the paths
// discovery gives as stores now): a store of the plan that is gone, or that discovery now leaves
// out (read as another agent's), cannot be applied as planned; the caller reports each as an
// error of the run. planned may be nil (no paths).
func Unreached(planned map[string]*PlannedStore, stores []string) []string {
	have := make(map[string]bool, len(stores))
	for _, p := range stores {
		have[p] = true
	}
	var out []string
	for p := range planned {
		if !have[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
