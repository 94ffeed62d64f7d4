package runlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// A run directory is not trusted input: it can be edited by anyone who can write the state
// directory, restored from an old backup, or shared (issue 9, finding 8). Two layers guard undo:
//
//   - checksums: manifest.json and every journal.jsonl line carry a SHA-256 of their own bytes
//     (seal); ReadRun refuses a run whose manifest or journal does not match. This catches any
//     edit by hand or by a tool that does not know the scheme, and damage; it is not a secret
//     (whoever can write the state directory can recompute it), so it is not the security
//     boundary;
//   - structural checks (CheckRun, run by Undo before anything is restored): what a manifest
//     entry may ask undo to do is bounded whatever the checksum says.

// ErrUntrustedRun means a run directory's manifest or journal failed its checksum or asks undo
// for something a run of sessionfix never records (see CheckRun). Nothing is restored then.
var ErrUntrustedRun = errors.New("run refused")

// UntrustedError names the run file and entry that failed and why.
type UntrustedError struct {
	Run    string // run id
	Where  string // "manifest.json", "manifest entry 2 (store /x)", "journal.jsonl line 3"
	Reason string
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s; nothing was restored", ErrUntrustedRun, e.Run, e.Where, e.Reason)
}

// Unwrap returns ErrUntrustedRun.
func (e *UntrustedError) Unwrap() error { return ErrUntrustedRun }

// ManifestVersion is the manifest version written now. Version 2 and later manifests and
// their journal lines are sealed (version 1 runs, written before checksums existed, are read
// unsealed and still pass CheckRun). Version 3 records a file's "after" content as an
// XXH3-128 checksum (After.Fingerprint, "xxh3-128:<hex>") instead of its SHA-256 (After.SHA256,
// versions 1 and 2, still undone). Version 4 records the original's the same way
// (Before.Fingerprint, "xxh3-128:<hex>", the backup's check) instead of Before.SHA256
// (versions 1 to 3, and a SQLite change in any version, still undone by SHA-256): see
// internal/fileio/checksum.go. Which algorithm checks a backup is said by the entry's own
// record (fileio.BeforeSum: its member and prefix), not by the version: a run recovered from
// its journal has no version, and an older binary's undo rewrites a manifest with its own
// version number. Version 5 records a file change's byte edits compactly (store.SiteEncoder:
// offsets and the old and new tokens once per distinct pair) inline (site_data) or in a file
// beside the backup (site_file, with its size and SHA-256), not as a JSON object per name
// (sites, versions 1 to 4, still undone); since this binary a version 5 entry also records the
// file's owner and group when its backup was taken (original_owner: optional, absent in older
// runs, which are still undone; an older binary ignores it and undoes the run as before), so no
// new version. A manifest of a later version than this is refused
// (readManifest): this binary cannot know what it records.
const ManifestVersion = 5

// sealedVersion is the first manifest version that is sealed.
const sealedVersion = 2

// Seal prefixes: the checksum is the first member of the JSON object, so it sits at a fixed
// byte offset and is found without decoding.
var (
	manifestSealPrefix = []byte("{\n  \"checksum\": \"sha256:")
	journalSealPrefix  = []byte("{\"sum\":\"sha256:")
	zeroSum            = bytes.Repeat([]byte("0"), 64)
)

// seal fills the 64 zero digits that follow prefix at the start of b (b must start with
// prefix+zeroSum) with the hex SHA-256 of b as it is with those zeros.
func seal(b, prefix []byte) {
	sum := sha256.Sum256(b)
	hex.Encode(b[len(prefix):len(prefix)+64], sum[:])
}

// checkSeal reports whether b starts with prefix and a 64-digit checksum (sealed) and, if so,
// whether the checksum is the SHA-256 of b with those digits replaced by zeros.
func checkSeal(b, prefix []byte) (sealed, ok bool) {
	if !bytes.HasPrefix(b, prefix) || len(b) < len(prefix)+64 {
		return false, false
	}
	want := make([]byte, 64)
	copy(want, b[len(prefix):len(prefix)+64])
	c := bytes.Clone(b)
	copy(c[len(prefix):], zeroSum)
	sum := sha256.Sum256(c)
	return true, hex.EncodeToString(sum[:]) == string(want)
}

// sealPlaceholder is the Checksum / Sum value marshalled before sealing.
var sealPlaceholder = SealPlaceholder

// SealPlaceholder is the value of a sealed document's "checksum" member before SealDocument
// fills it in: "sha256:" and 64 zeros.
const SealPlaceholder = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// SealDocument seals b, an indented JSON document sealed like a run's manifest (a plan file):
// its first member "checksum" (at a fixed offset: `{`, a newline and two spaces) holds
// SealPlaceholder, whose 64 zeros become the hex SHA-256 of b as it is with them. False (b
// unchanged) when b does not start so.
func SealDocument(b []byte) bool {
	if !bytes.HasPrefix(b, manifestSealPrefix) || len(b) < len(manifestSealPrefix)+64 {
		return false
	}
	seal(b, manifestSealPrefix)
	return true
}

// CheckDocumentSeal reports whether b is sealed as SealDocument seals (a "checksum" first
// member with 64 hex digits) and, if so, whether they are the SHA-256 of b with them as zeros.
func CheckDocumentSeal(b []byte) (sealed, ok bool) { return checkSeal(b, manifestSealPrefix) }

// marshalManifest returns the sealed bytes of m (indented JSON, its Checksum first).
func marshalManifest(m *Manifest) ([]byte, error) {
	c := *m
	c.Version = ManifestVersion
	c.Checksum = sealPlaceholder
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	if !bytes.HasPrefix(b, manifestSealPrefix) {
		return nil, fmt.Errorf("manifest: checksum is not the first member")
	}
	seal(b, manifestSealPrefix)
	m.Version = ManifestVersion
	return b, nil
}

// marshalJournalLine returns one sealed journal line (with its newline).
func marshalJournalLine(e journalEntry) ([]byte, error) {
	var buf bytes.Buffer
	return encodeJournalLine(&buf, e)
}

// encodeJournalLine is marshalJournalLine encoding into buf (reset first; the line returned is
// its bytes, valid until buf is used again): json.Marshal's bytes and a newline, as
// json.Encoder writes them, without json.Marshal's copy of the line (a "commit" or "done" line
// holds a store's inline sites: ~14 KB for a session of make bench's dense corpus, whose fix
// --apply journals 3.4 MB).
func encodeJournalLine(buf *bytes.Buffer, e journalEntry) ([]byte, error) {
	e.Sum = sealPlaceholder
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(e); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if !bytes.HasPrefix(b, journalSealPrefix) {
		return nil, fmt.Errorf("journal: checksum is not the first member")
	}
	seal(b[:len(b)-1], journalSealPrefix) // the line without its newline, as checkSeal reads it
	return b, nil
}

// verifySeal checks the seal of a manifest m whose seal was checked (sealed, ok: see
// checkSeal) while it was read: a version 2 (or later) manifest must be sealed and match; an
// unsealed version 1 manifest is accepted; a version later than ManifestVersion is refused.
func verifySeal(run string, sealed, ok bool, m *Manifest) error {
	switch {
	case sealed && !ok:
		return &UntrustedError{Run: run, Where: manifestName, Reason: "its checksum does not match its content (edited or damaged)"}
	case !sealed && (m.Version >= sealedVersion || m.Checksum != ""):
		return &UntrustedError{Run: run, Where: manifestName, Reason: fmt.Sprintf("version %d manifest without a valid checksum (edited or damaged)", m.Version)}
	case m.Version > ManifestVersion:
		return &UntrustedError{Run: run, Where: manifestName, Reason: fmt.Sprintf(
			"version %d manifest, written by a newer sessionfix (this one reads versions 1 to %d): undo it with that version", m.Version, ManifestVersion)}
	}
	return nil
}

// CheckRun checks every not yet restored file entry of the manifest m of the run directory dir
// against what a run of sessionfix records, on the file system as it is now:
//
//   - the run directory, its backups directory, manifest.json and journal.jsonl are owned by the effective user and not writable by group or others (Unix):
//     the roots the path checks rely on come from the manifest itself, and its checksum is no
//     secret, so only this bounds who can make undo write where;
//   - the store path is absolute and clean (no "..", no "."), lies under one of the run's
//     recorded roots (made absolute when the run recorded them; a root that is a symlink counts under its own
//     spelling and its target), and no directory between the root and the store, nor the store
//     itself, is a symlink;
//   - the store, where it exists, is a regular file (not a symlink, device, FIFO, socket or
//     directory);
//   - the backup (and a SQLite change's rows file) is a regular file directly in the run's own
//     backups/ directory (which is a real directory, not a symlink), with no other hard link
//     unless it is the store's own inode (a run stopped before its rename);
//   - the recorded original mode is a plain file mode, and it has setuid or setgid only where the
//     backup file itself and the store as it is now both have that bit;
//   - the entry records exactly one checksum of the original, of a kind a run writes
//     (fileio.CheckChangeSum: Before.SHA256, 64 hex digits, or Before.Fingerprint,
//     "xxh3-128:" and 32 hex digits): undo checks the backup against it before anything is
//     restored, so an entry without one, with two, or with one of an unknown algorithm or
//     length is refused here rather than one store at a time; so is a SQLite entry (kind
//     store.KindSQLite) without Before.SHA256, the only checksum engine/sqlite checks its
//     backup with.
//
// It returns an *UntrustedError naming the first entry that fails (manifest entries count from
// 1 in file order), nil when every entry passes.
func CheckRun(dir string, m *Manifest) error {
	bdir := filepath.Join(dir, backupsDir)
	roots, err := checkRunDir(dir, bdir, m)
	if err != nil {
		return err
	}
	if err := checkMoves(m, roots); err != nil {
		return err
	}
	realB, _ := filepath.EvalSymlinks(bdir)
	for i := range m.Files {
		f := &m.Files[i]
		if f.Restored {
			continue
		}
		var why string
		if f.Ref.Kind == store.KindPostgres || store.IsReference(f.Ref.Path) {
			why = checkDatabaseEntry(f, m.Roots)
		} else {
			why = checkFileEntry(f, runPlaces{recorded: m.Roots, roots: roots, bdir: bdir, realB: realB})
		}
		if why != "" {
			return &UntrustedError{Run: m.RunID, Where: fmt.Sprintf("manifest entry %d (store %q)", i+1, f.Ref.Path), Reason: why}
		}
	}
	return nil
}

// checkRunDir is CheckRun's first step: the run directory dir and its backups directory bdir
// are real directories only the effective user could have written (writableByOthers), and the
// manifest records roots; it returns them absolute (absRoots).
func checkRunDir(dir, bdir string, m *Manifest) ([]string, error) {
	for _, d := range []string{dir, bdir} {
		if fi, err := os.Lstat(d); err == nil && (!fi.IsDir() || fi.Mode()&os.ModeSymlink != 0) {
			return nil, &UntrustedError{Run: m.RunID, Where: d, Reason: "is not a directory (a symlink or another file)"}
		}
	}
	// Who may have written the run: every check below trusts the manifest's roots.
	if why := writableByOthers(dir); why != "" {
		return nil, &UntrustedError{Run: m.RunID, Where: manifestName, Reason: why}
	}
	roots, err := absRoots(m.Roots)
	if err != nil && m.unreadable != "" && len(m.Roots) == 0 {
		// The journal gave the files back, but the roots every check trusts are only in the
		// manifest: say why the manifest could not be read, not only what that leaves out.
		return nil, &UntrustedError{Run: m.RunID, Where: manifestName, Reason: "unreadable (" + m.unreadable + "), and the journal does not record the run's roots, so its entries cannot be checked"}
	}
	if err != nil {
		return nil, &UntrustedError{Run: m.RunID, Where: manifestName, Reason: err.Error()}
	}
	return roots, nil
}

// checkDatabaseEntry checks the entry f of a database store (store.go, "Database-backed
// stores"): a reference among the run's roots, holding no password; its backup rows are in
// the database, which checks each row itself when restoring. It returns why f is refused, ""
// when it passes.
func checkDatabaseEntry(f *FileEntry, roots []string) string {
	p := f.Ref.Path
	switch {
	case f.Ref.Kind != store.KindPostgres || !store.IsReference(p):
		return fmt.Sprintf("a %s store named %q: a database store is named by a postgres:// reference, and only a database store is", f.Ref.Kind, p)
	case store.Redact(p) != p:
		return "the reference holds a password (a run never records one)"
	case !slices.Contains(roots, p):
		return fmt.Sprintf("the reference is not one of the run's roots (%s)", strings.Join(roots, ", "))
	case f.SiteFile != nil || f.Before.Size != 0 || f.After.Size != 0:
		return "a database store's change records no file"
	}
	return ""
}

// runPlaces are where a run's file entries may point: its roots as recorded and made absolute
// (absRoots), its backups directory bdir and that directory resolved (realB).
type runPlaces struct {
	recorded, roots []string
	bdir, realB     string
}

// checkFileEntry checks the entry f of a file store against the run's places: the store's path
// and file, the files in backups/, the recorded mode and the checksum of the original
// (CheckRun's list). It returns why f is refused, "" when it passes.
func checkFileEntry(f *FileEntry, at runPlaces) string {
	bdir, realB := at.bdir, at.realB
	cur, why := checkStorePath(f.Ref.Path, at)
	if why != "" {
		return why
	}
	bfi, err := checkInBackups(f.Backup, bdir, realB, f.Ref.Path)
	if err != nil {
		return fmt.Sprintf("backup %q: %v", f.Backup, err)
	}
	if f.SiteFile != nil {
		if _, err := checkInBackups(f.SiteFile.Path, bdir, realB, ""); err != nil {
			return fmt.Sprintf("sites file %q: %v", f.SiteFile.Path, err)
		}
	}
	if rf := rowsFile(f.Verify); rf != "" {
		if _, err := checkInBackups(rf, bdir, realB, ""); err != nil {
			return fmt.Sprintf("rows file %q: %v", rf, err)
		}
	}
	if why := checkMode(f.Before.Mode, bfi, cur); why != "" {
		return why
	}
	if err := fileio.CheckChangeSum(f.Before); err != nil {
		return fmt.Sprintf("the checksum of the original (\"before\"): %v", err)
	}
	if f.Ref.Kind == store.KindSQLite && f.Before.SHA256 == "" {
		return "the checksum of the original (\"before\"): a database's backup is checked by its sha256, which the entry does not record"
	}
	return ""
}

// checkStorePath checks a file store's path p: absolute and clean, under one of the run's roots,
// no symlink from the root down to it, and, where it exists, a regular file (cur: its Lstat,
// nil when it does not exist). It returns why p is refused, "" when it passes.
func checkStorePath(p string, at runPlaces) (cur os.FileInfo, why string) {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || hasDotDot(p) {
		return nil, "the store path is not absolute and clean"
	}
	root, ok := underRoot(p, at.roots)
	if !ok {
		return nil, fmt.Sprintf("the store path is outside the run's roots (%s)", strings.Join(at.recorded, ", "))
	}
	if link := symlinkBelow(root, p); link != "" {
		return nil, fmt.Sprintf("%s is a symlink (a run never rewrites through one)", link)
	}
	cur, err := os.Lstat(p)
	switch {
	case err == nil && !cur.Mode().IsRegular():
		return nil, fmt.Sprintf("the store is not a regular file (%s)", cur.Mode().Type())
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Sprintf("cannot check the store: %v", err)
	}
	return cur, ""
}

// checkMode checks the recorded original mode: a plain file mode, with setuid or setgid only
// where the backup (bfi) and the store as it is now (cur, nil when gone) both have that bit.
func checkMode(mode os.FileMode, bfi, cur os.FileInfo) string {
	if mode&os.ModeType != 0 {
		return fmt.Sprintf("the recorded mode %s is not a regular file's", mode)
	}
	for _, bit := range []os.FileMode{os.ModeSetuid, os.ModeSetgid} {
		if mode&bit == 0 {
			continue
		}
		if bfi.Mode()&bit == 0 || cur == nil || cur.Mode()&bit == 0 {
			return fmt.Sprintf("the recorded mode %s has %s, which the backup or the store does not have", mode, bitName(bit))
		}
	}
	return ""
}

// writableByOthers returns why the run directory dir (itself, backups/, manifest.json,
// journal.jsonl) could have been written by another user than the effective one (checkOwner),
// "" when it could not. The runs/ parent is not checked: whoever may write it can only move
// run directories, not make one the effective user owns (and `sudo sessionfix` with the
// user's HOME puts root's runs in the user's runs/).
func writableByOthers(dir string) string {
	for _, p := range []string{dir, filepath.Join(dir, backupsDir), filepath.Join(dir, manifestName), filepath.Join(dir, journalName)} {
		if fi, err := os.Lstat(p); err == nil {
			if why := checkOwner(p, fi); why != "" {
				return why
			}
		}
	}
	return ""
}

func bitName(b os.FileMode) string {
	if b == os.ModeSetuid {
		return "setuid"
	}
	return "setgid"
}

// absRoots makes the run's roots absolute and clean, each with its symlink-resolved form too.
func absRoots(roots []string) ([]string, error) {
	if len(roots) == 0 {
		return nil, errors.New("the run records no roots")
	}
	var out []string
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("root %q: %w", r, err)
		}
		out = append(out, a)
		if e, err := filepath.EvalSymlinks(a); err == nil && e != a {
			out = append(out, e)
		}
	}
	return out, nil
}

func hasDotDot(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c == ".." || c == "." {
			return true
		}
	}
	return false
}

// underRoot returns the root p lies under (or is).
func underRoot(p string, roots []string) (string, bool) {
	for _, r := range roots {
		rel, err := filepath.Rel(r, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return r, true
		}
	}
	return "", false
}

// symlinkBelow returns the first path from below root down to p (p included, root excluded
// unless it is p) that is a symlink, "" when none is.
func symlinkBelow(root, p string) string {
	rel, _ := filepath.Rel(root, p)
	cur := root
	parts := strings.Split(rel, string(filepath.Separator))
	if rel == "." {
		parts = nil
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return p
		}
	}
	for _, c := range parts {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			return ""
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return cur
		}
	}
	return ""
}

// checkInBackups checks that b is a regular file directly in the run's backups directory (bdir,
// resolved realB) and has no other hard link (unless it is the store's inode, store != "").
func checkInBackups(b, bdir, realB, storePath string) (os.FileInfo, error) {
	if b == "" || !filepath.IsAbs(b) || filepath.Clean(b) != b || hasDotDot(b) {
		return nil, errors.New("not an absolute clean path")
	}
	d := filepath.Dir(b)
	if d != bdir {
		rd, err := filepath.EvalSymlinks(d)
		if err != nil || realB == "" || rd != realB {
			return nil, errors.New("not in this run's backups directory")
		}
	}
	fi, err := os.Lstat(b)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fileio.LinkCount(fi) > 1 {
		if storePath == "" {
			return nil, errors.New("has other hard links")
		}
		if sfi, err := os.Lstat(storePath); err != nil || !os.SameFile(fi, sfi) {
			return nil, errors.New("has other hard links (a backup holds the original inode alone)")
		}
	}
	return fi, nil
}

// rowsFile returns the rows file a SQLite change's verify data names ("" for other stores).
func rowsFile(verify []byte) string {
	if len(verify) == 0 {
		return ""
	}
	var v struct {
		RowsFile string `json:"rows_file"`
	}
	if json.Unmarshal(verify, &v) != nil {
		return ""
	}
	return v.RowsFile
}
