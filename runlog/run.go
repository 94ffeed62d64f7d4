package runlog

import (
	"encoding/json"
	"time"

	"github.com/sessionfix/sessionfix/store"
)

// Run states recorded in a manifest.
const (
	StateApplying        = "applying"         // the run was interrupted (journal only)
	StateApplied         = "applied"          // every planned store was rewritten
	StatePartial         = "partial"          // some stores were skipped or failed, or the run was killed (ListRuns)
	StateNothing         = "nothing-to-do"    // no store needed a change
	StateUndone          = "undone"           // every change was restored
	StatePartiallyUndone = "partially-undone" // undo refused some stores
)

// Manifest is manifest.json of a run directory: everything undo needs.
type Manifest struct {
	// Checksum is "sha256:" and the hex SHA-256 of the file with these 64 digits as zeros
	// (version 2; see trust.go). It is the first member so it sits at a fixed offset.
	Checksum  string      `json:"checksum,omitempty"`
	Version   int         `json:"version"`
	RunID     string      `json:"run_id"`
	Created   time.Time   `json:"created"`
	Command   string      `json:"command,omitempty"`
	Roots     []string    `json:"roots,omitempty"`
	State     string      `json:"state"`
	UndoneAt  *time.Time  `json:"undone_at,omitempty"`
	Files     []FileEntry `json:"files"`
	Skipped   []Skipped   `json:"skipped,omitempty"`
	ToolNotes []string    `json:"notes,omitempty"`
	// Profile is the --profile the run's SQLite stores were read with (nil: none), so undo
	// reopens them with it (issue 23 item 6). Sealed with the rest of the manifest.
	Profile *RunProfile `json:"profile,omitempty"`
	// Moves are the stores the run moved (fix --apply --move-legacy; move.go), in the order
	// made; absent when none.
	Moves []MoveEntry `json:"moves,omitempty"`

	dir string // the run directory ReadRun read (where light entries are read back from)
	// unreadable is why manifest.json could not be read when ReadRun recovered the files from
	// the journal ("" when it was read).
	unreadable string
}

// RunProfile is a user SQLite profile (--profile FILE) as a run recorded it: the path it was
// read from (absolute; for messages only) and the file's JSON document as read.
type RunProfile struct {
	Source   string          `json:"source"`
	Document json.RawMessage `json:"document"`
}

// FileEntry records one rewritten store.
type FileEntry struct {
	store.Change
	Renames []Rename `json:"renames"`
	// Restored is set once undo put the backup back.
	Restored bool `json:"restored,omitempty"`

	// src is set on an entry ReadRun read without its Sites (readrun.go): where it is whole.
	src *entrySrc
}

// Rename counts one old → new name in a store.
type Rename struct {
	Old   string `json:"old"`
	New   string `json:"new"`
	Count int    `json:"count"`
}

// Skipped records a planned store that was not rewritten, with why.
type Skipped struct {
	Ref    store.Ref `json:"store"`
	Reason string    `json:"reason"`
	InUse  bool      `json:"in_use,omitempty"`
}

// journalEntry is one line of journal.jsonl, appended (and fsynced) around each replace so an
// interrupted run can still be undone, and around each temp file so the next run can remove
// what a killed one left.
type journalEntry struct {
	// Sum seals the line like Manifest.Checksum (first member, see trust.go).
	Sum string `json:"sum,omitempty"`
	// "commit" (about to replace), "done", "abort"; "move", "move-dir", "moved", "move-abort"
	// (a store moved, move.go); fileio.TempCreating, TempForeign, TempGone (Path is the temp
	// file, Store the file it is for).
	Event string     `json:"event"`
	Entry *FileEntry `json:"entry,omitempty"`
	// Move is the move of a "move" (from and to) or "moved" (the whole entry) line.
	Move   *MoveEntry `json:"move,omitempty"`
	Path   string     `json:"path,omitempty"`
	Store  string     `json:"store,omitempty"`
	Reason string     `json:"reason,omitempty"`
	// Dir is the directory a "move-dir" line announces (Path: the store moved), made next.
	Dir string `json:"dir,omitempty"`
}

const (
	manifestName = "manifest.json"
	journalName  = "journal.jsonl"
	backupsDir   = "backups"
	runsDir      = "runs"
)
