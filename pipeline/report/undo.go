package report

// UndoFile is one store of an undo in --format json.
type UndoFile struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Status: restored (Reason set when something failed after the restore), already (restored
	// by an earlier undo), changed (refused: it changed
	// since the run; --force restores it), in-use (refused: an agent holds it), failed.
	Status string `json:"status"`
	Names  int    `json:"names"`
	Reason string `json:"reason,omitempty"`
	// MovedFrom is set for a store the run moved (fix --move-legacy): where it was, Path
	// where it is moved back to.
	MovedFrom string `json:"moved_from,omitempty"`
	// Kept is where a forced restore kept what the store held before it (--force over a store
	// that changed since the run: its later changes are there, not in the store).
	Kept string `json:"kept,omitempty"`
	// Notes say how the store was restored when the user should know (a database put back row
	// by row, not byte for byte, and why).
	Notes []string `json:"notes,omitempty"`
}

// UndoReport is undo --format json: always one closed document; Error is set when the undo
// could not run or stopped (the files restored so far are still listed).
type UndoReport struct {
	RunID          string     `json:"run_id,omitempty"`
	RunDir         string     `json:"run_dir,omitempty"`
	AlreadyUndone  bool       `json:"already_undone"`
	Files          []UndoFile `json:"files"`
	Restored       int        `json:"restored"`
	NotRestored    int        `json:"not_restored"`
	Summary        string     `json:"summary,omitempty"`
	Error          string     `json:"error,omitempty"`
	NothingChanged bool       `json:"nothing_changed,omitempty"` // the --force confirmation was declined
}
