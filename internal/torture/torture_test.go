package torture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A scenario runs its trials and reports them; a failure is a broken guarantee (a mixed
// file, a lost byte, an inexact undo, an undocumented exit code), described in Failures.
type scenario struct {
	name string
	run  func(h *harness, r *report)
}

// scenarios of `make torture`. Other store kinds (SQLite, tampered manifests) add theirs here.
var scenarios = []scenario{
	{"kill-fix-jsonl", killFix},
	{"kill-undo-jsonl", killUndo},
	{"writer-opens-during-copy", writerOpensDuringCopy},
	{"writer-holds-descriptor", writerHoldsDescriptor},
	{"writer-appends-during-fix", writerAppendsDuringFix},
	{"writer-opens-at-random", writerOpensAtRandom},
	{"full-state-disk", fullStateDisk},
}

type report struct {
	Trials    int
	Failures  []string
	BytesLost int64
	Notes     map[string]int // outcome counts (exit codes, carried over, refused, …)
}

func (r *report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

func (r *report) note(k string) {
	if r.Notes == nil {
		r.Notes = map[string]int{}
	}
	r.Notes[k]++
}

// harness holds the built binary and the pristine corpus: its files before and after a fix.
type harness struct {
	t      *testing.T
	bin    string
	corpus string            // a pristine tree: the fixtures plus a large session
	big    string            // the large session, relative to the corpus
	old    map[string]string // rel path → sha256 before a fix
	new    map[string]string // rel path → sha256 after a complete fix
	fixDur time.Duration     // how long a complete fix takes
	undDur time.Duration     // how long a complete undo takes
}

func TestTorture(t *testing.T) {
	if os.Getenv("SESSIONFIX_TORTURE") == "" {
		t.Skip("the torture tests run with SESSIONFIX_TORTURE=1 (make torture): they take minutes")
	}
	h := newHarness(t)
	trials := 0
	failures := 0
	var lost int64
	var summary []string
	only := os.Getenv("SESSIONFIX_TORTURE_ONLY")
	for _, sc := range scenarios {
		if only != "" && !strings.Contains(","+only+",", ","+sc.name+",") {
			continue
		}
		start := time.Now()
		r := &report{}
		// Each scenario is a subtest (go test -run 'TestTorture/kill-fix-sqlite' picks one, like
		// SESSIONFIX_TORTURE_ONLY); its harness reports to the subtest.
		selected := false
		t.Run(sc.name, func(st *testing.T) {
			selected = true
			hs := *h
			hs.t = st
			sc.run(&hs, r)
			for i, f := range r.Failures {
				if i == 10 {
					st.Errorf("… %d more failures", len(r.Failures)-10)
					break
				}
				st.Errorf("%s", f)
			}
		})
		if !selected {
			continue // not selected by -run
		}
		trials += r.Trials
		failures += len(r.Failures)
		lost += r.BytesLost
		keys := make([]string, 0, len(r.Notes))
		for k := range r.Notes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var notes []string
		for _, k := range keys {
			notes = append(notes, fmt.Sprintf("%s=%d", k, r.Notes[k]))
		}
		line := fmt.Sprintf("%-26s trials %3d  failures %d  bytes lost %d  (%s; %s)", sc.name, r.Trials, len(r.Failures), r.BytesLost,
			strings.Join(notes, " "), time.Since(start).Round(time.Second))
		summary = append(summary, line)
	}
	fmt.Printf("\ntorture summary\n%s\n%-26s trials %3d  failures %d  bytes lost %d\n", strings.Join(summary, "\n"), "TOTAL", trials, failures, lost)
}

// trialsOf is the number of trials of a scenario: def, or SESSIONFIX_TORTURE_TRIALS.
// Other knobs: SESSIONFIX_TORTURE_BIN (a binary to test instead of building one),
// SESSIONFIX_TORTURE_ONLY (comma-separated scenario names), SESSIONFIX_TORTURE_STATE (where the
// state directories are made: see fresh).
func trialsOf(def int) int {
	if n, err := strconv.Atoi(os.Getenv("SESSIONFIX_TORTURE_TRIALS")); err == nil && n > 0 {
		return n
	}
	return def
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, bin: os.Getenv("SESSIONFIX_TORTURE_BIN")}
	if h.bin == "" {
		h.bin = filepath.Join(t.TempDir(), "sessionfix")
		build := exec.Command("go", "build", "-o", h.bin, "../../cmd/sessionfix")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	h.corpus = filepath.Join(t.TempDir(), "corpus")
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", h.corpus)
	// A large session (about 20 MB) from the fixture's records, so that kills and writers
	// land in the middle of a copy.
	src := filepath.Join(h.corpus, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	rec, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	h.big = "projects/-home-demo-src-big/chats/00000000-0000-4000-8000-000000000020.jsonl"
	var b bytes.Buffer
	for b.Len() < 20<<20 {
		b.Write(rec)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(h.corpus, h.big)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.corpus, h.big), b.Bytes(), 0o640); err != nil {
		t.Fatal(err)
	}
	h.old = sums(t, h.corpus)
	// The reference: a complete fix of a copy.
	dir, state := h.fresh()
	start := time.Now()
	if code, out := h.sessionfix("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir); code != 0 {
		t.Fatalf("reference fix: exit %d\n%s", code, out)
	}
	h.fixDur = time.Since(start)
	h.new = sums(t, dir)
	changed := 0
	for k := range h.old {
		if h.old[k] != h.new[k] {
			changed++
		}
	}
	if changed < 3 {
		t.Fatalf("the reference fix changed %d files, want at least 3", changed)
	}
	start = time.Now()
	if code, out := h.sessionfix("undo", "--last", "--state-dir", state); code != 0 {
		t.Fatalf("reference undo: exit %d\n%s", code, out)
	}
	h.undDur = time.Since(start)
	fmt.Printf("torture: corpus %d files (%d rewritten by fix), fix %s, undo %s\n", len(h.old), changed, h.fixDur.Round(time.Millisecond), h.undDur.Round(time.Millisecond))
	return h
}

// fresh copies the corpus to a new directory (hard links are avoided: every file is its own
// inode) and returns it with a new state directory on the same file system, or, with
// SESSIONFIX_TORTURE_STATE set, in a new directory under that one (a state directory on another
// file system than the stores: a tmpfs against the disk, where a rewrite's backup cannot be a
// link and one file system's sync does not cover the other's).
func (h *harness) fresh() (dir, state string) {
	base := h.t.TempDir()
	dir = filepath.Join(base, "dot-qwen")
	copyTree(h.t, h.corpus, dir)
	if at := os.Getenv("SESSIONFIX_TORTURE_STATE"); at != "" {
		sbase, err := os.MkdirTemp(at, "torture-state")
		if err != nil {
			h.t.Fatal(err)
		}
		h.t.Cleanup(func() { _ = os.RemoveAll(sbase) })
		return dir, filepath.Join(sbase, "state")
	}
	return dir, filepath.Join(base, "state")
}

func (h *harness) sessionfix(args ...string) (int, string) {
	cmd := exec.Command(h.bin, args...)
	out, err := cmd.CombinedOutput()
	return exitCode(err), string(out)
}

// start runs sessionfix without waiting.
func (h *harness) start(args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(h.bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	return cmd, &out
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return -int(st.Signal())
		}
		return ee.ExitCode()
	}
	return -1000
}

// checkOldOrNew reports every file of dir that is neither its old nor its new content.
func (h *harness) checkOldOrNew(r *report, trial string, dir string) {
	for rel, sum := range sums(h.t, dir) {
		if isTemp(filepath.Base(rel)) {
			continue
		}
		if sum != h.old[rel] && sum != h.new[rel] {
			r.fail("%s: %s is neither the old nor the new content (mixed)", trial, rel)
		}
	}
}

// checkOld reports every file of dir whose content is not the original.
func (h *harness) checkOld(r *report, trial, dir string) {
	for rel, sum := range sums(h.t, dir) {
		if !isTemp(filepath.Base(rel)) && sum != h.old[rel] {
			r.fail("%s: after undo %s is not the original", trial, rel)
		}
	}
}

var tempRE = regexp.MustCompile(`^\..+\.jsonl?[0-9]+$`)

func isTemp(name string) bool { return tempRE.MatchString(name) }

// temps lists the temp files under dir and in the state directory.
func temps(dirs ...string) []string {
	var out []string
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && (isTemp(e.Name()) || strings.HasPrefix(e.Name(), ".manifest.json")) {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// killFix: SIGKILL at a random instant of fix; every file old or new; the next undo removes the
// temp files and restores exactly.
func killFix(h *harness, r *report) {
	for i := range trialsOf(100) {
		r.Trials++
		trial := fmt.Sprintf("trial %d", i)
		dir, state := h.fresh()
		cmd, _ := h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		time.Sleep(time.Duration(rand.Int64N(int64(h.fixDur) + 1)))
		_ = cmd.Process.Kill()
		code := exitCode(cmd.Wait())
		r.note(fmt.Sprintf("exit%d", code))
		h.checkOldOrNew(r, trial, dir)
		left := len(temps(dir, state))
		if left > 0 {
			r.note("left-temps")
		}
		ucode, out := h.sessionfix("undo", "--last", "--state-dir", state)
		switch {
		case ucode == 0:
		case strings.Contains(out, "no run with changes left to undo") || strings.Contains(out, "no such run"):
			// killed before anything was journaled: nothing may have changed
		default:
			r.fail("%s: undo exit %d: %s", trial, ucode, out)
		}
		h.checkOld(r, fmt.Sprintf("%s (undo exit %d: %s)", trial, ucode, strings.TrimSpace(out)), dir)
		if l := temps(dir, state); len(l) > 0 {
			r.fail("%s: temp files left after the next undo: %v", trial, l)
		}
	}
}

// killUndo: a complete fix, then SIGKILL at a random instant of undo; every file old or new;
// undo again restores exactly and removes the temp files.
func killUndo(h *harness, r *report) {
	for i := range trialsOf(40) {
		r.Trials++
		trial := fmt.Sprintf("trial %d", i)
		dir, state := h.fresh()
		if code, out := h.sessionfix("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir); code != 0 {
			r.fail("%s: fix exit %d: %s", trial, code, out)
			continue
		}
		cmd, _ := h.start("undo", "--last", "--state-dir", state)
		time.Sleep(time.Duration(rand.Int64N(int64(h.undDur) + 1)))
		_ = cmd.Process.Kill()
		r.note(fmt.Sprintf("exit%d", exitCode(cmd.Wait())))
		h.checkOldOrNew(r, trial, dir)
		code, out := h.sessionfix("undo", "--last", "--state-dir", state)
		if code != 0 && !strings.Contains(out, "no run with changes left to undo") {
			r.fail("%s: second undo exit %d: %s", trial, code, out)
		}
		h.checkOld(r, trial, dir)
		if l := temps(dir, state); len(l) > 0 {
			r.fail("%s: temp files left after the second undo: %v", trial, l)
		}
	}
}

// lineCheck verifies that the session at path (and, after undo, still) holds line, and
// counts the bytes lost.
func lineCheck(r *report, trial, path, line, when string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		r.fail("%s: %s: %v", trial, when, err)
		return false
	}
	if !bytes.Contains(b, []byte(line)) {
		r.fail("%s: %s: the agent's line is not in the session", trial, when)
		r.BytesLost += int64(len(line))
		return false
	}
	return true
}

// writerOpensDuringCopy is the shape of issue 9 finding 1: when the copy starts (the session's
// backup appears in the run directory, or its temp file beside it: a temp written without a
// name appears only right before the rename), open it O_WRONLY|O_APPEND; write a line after
// fix exited. The line must
// be in the session: refused (exit 4, file untouched) or carried over/rolled back (exit 4); a
// fix that exits 0 must not have lost it; undo must keep it and put the old names back.
func writerOpensDuringCopy(h *harness, r *report) {
	for i := range trialsOf(50) {
		r.Trials++
		trial := fmt.Sprintf("trial %d", i)
		dir, state := h.fresh()
		session := filepath.Join(dir, h.big)
		cmd, out := h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		f := openWhenCopyStarts(session, state, 10*time.Second)
		code := exitCode(cmd.Wait())
		if f == nil {
			r.note("temp-never-seen")
			continue
		}
		time.Sleep(200 * time.Millisecond) // "two seconds later, after fix exited"
		line := fmt.Sprintf(`{"uuid":"late-%d","type":"user","message":{"role":"user","parts":[{"text":"written after fix exited"}]}}`+"\n", i)
		if _, err := f.WriteString(line); err != nil {
			r.fail("%s: write: %v", trial, err)
		}
		f.Close()
		r.note(fmt.Sprintf("exit%d", code))
		if code != 0 && code != 4 {
			r.fail("%s: fix exit %d: %s", trial, code, out)
		}
		if !lineCheck(r, trial, session, line, "after fix") {
			continue
		}
		undoKeeps(h, r, trial, dir, state, session, line)
	}
}

// undoKeeps undoes the newest run (when it rewrote anything) and checks that every file is
// the original, except the session with the agent's line: its original bytes plus the line.
func undoKeeps(h *harness, r *report, trial, dir, state, session, line string) {
	code, out := h.sessionfix("undo", "--last", "--state-dir", state)
	if code != 0 && !strings.Contains(out, "no run with changes left to undo") {
		r.fail("%s: undo exit %d: %s", trial, code, out)
		return
	}
	if !lineCheck(r, trial, session, line, "after undo") {
		return
	}
	b, _ := os.ReadFile(session)
	if want := h.old[h.big]; sha(bytes.Replace(b, []byte(line), nil, 1)) != want {
		r.fail("%s: after undo the session is not its original bytes plus the agent's line", trial)
	}
	r.note("undo-kept-line")
	for rel, sum := range sums(h.t, dir) {
		if filepath.Join(dir, rel) != session && !isTemp(filepath.Base(rel)) && sum != h.old[rel] {
			r.fail("%s: after undo %s is not the original", trial, rel)
		}
	}
}

// openWhenCopyStarts polls the session's directory for ".<name><digits>" and the run
// directories under state for the session's backup ("backups/<n>-<name>", made before the
// copy), and opens the session for appending as soon as either is there.
func openWhenCopyStarts(session, state string, limit time.Duration) *os.File {
	dir, base := filepath.Dir(session), filepath.Base(session)
	temp := regexp.MustCompile(`^\.` + regexp.QuoteMeta(base) + `[0-9]+$`)
	backup := regexp.MustCompile(`^[0-9]+-` + regexp.QuoteMeta(base) + `$`)
	started := func() bool {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if temp.MatchString(e.Name()) {
				return true
			}
		}
		bks, _ := filepath.Glob(filepath.Join(state, "runs", "*", "backups", "*"))
		for _, p := range bks {
			if backup.MatchString(filepath.Base(p)) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		if started() {
			f, err := os.OpenFile(session, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return nil
			}
			return f
		}
		time.Sleep(200 * time.Microsecond)
	}
	return nil
}

// writerHoldsDescriptor: the agent holds its session open for appending before fix starts
// and writes after: fix refuses the session (exit 4), the line is there.
func writerHoldsDescriptor(h *harness, r *report) {
	for i := range trialsOf(10) {
		r.Trials++
		trial := fmt.Sprintf("trial %d", i)
		dir, state := h.fresh()
		session := filepath.Join(dir, h.big)
		f, err := os.OpenFile(session, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			h.t.Fatal(err)
		}
		code, out := h.sessionfix("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		line := fmt.Sprintf(`{"uuid":"held-%d","type":"user","message":{"role":"user","parts":[{"text":"held open"}]}}`+"\n", i)
		_, _ = f.WriteString(line)
		f.Close()
		r.note(fmt.Sprintf("exit%d", code))
		if code != 4 {
			r.fail("%s: fix exit %d, want 4 (in use): %s", trial, code, out)
		}
		if lineCheck(r, trial, session, line, "after fix") {
			undoKeeps(h, r, trial, dir, state, session, line)
		}
	}
}

// writerAppendsDuringFix: lines appended (open, write, close) at random instants while fix
// runs; none may be lost, and undo keeps them.
func writerAppendsDuringFix(h *harness, r *report) {
	for i := range trialsOf(30) {
		r.Trials++
		trial := fmt.Sprintf("trial %d", i)
		dir, state := h.fresh()
		session := filepath.Join(dir, h.big)
		cmd, out := h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		time.Sleep(time.Duration(rand.Int64N(int64(h.fixDur) + 1)))
		line := fmt.Sprintf(`{"uuid":"append-%d","type":"user","message":{"role":"user","parts":[{"text":"appended during fix"}]}}`+"\n", i)
		f, err := os.OpenFile(session, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			h.t.Fatal(err)
		}
		_, _ = f.WriteString(line)
		f.Close()
		code := exitCode(cmd.Wait())
		r.note(fmt.Sprintf("exit%d", code))
		if code != 0 && code != 4 {
			r.fail("%s: fix exit %d: %s", trial, code, out)
		}
		if lineCheck(r, trial, session, line, "after fix") {
			undoKeeps(h, r, trial, dir, state, session, line)
		}
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sums maps each regular file under dir (relative path) to its sha256.
func sums(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !e.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTree(t *testing.T, src, dst string) {
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := e.Info()
		if err := os.WriteFile(target, b, 0o640); err != nil {
			return err
		}
		return os.Chtimes(target, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writerOpensAtRandom: the agent opens its session for appending at a random instant of fix
// (before, during the copy, around the rename, after), keeps the descriptor until fix exited,
// then writes. The line must be in the session, and undo must keep it.
func writerOpensAtRandom(h *harness, r *report) {
	for i := range trialsOf(40) {
		r.Trials++
		trial := fmt.Sprintf("trial %d", i)
		dir, state := h.fresh()
		session := filepath.Join(dir, h.big)
		cmd, out := h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		time.Sleep(time.Duration(rand.Int64N(int64(h.fixDur) + 1)))
		f, err := os.OpenFile(session, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			h.t.Fatal(err)
		}
		code := exitCode(cmd.Wait())
		line := fmt.Sprintf(`{"uuid":"random-%d","type":"user","message":{"role":"user","parts":[{"text":"opened at a random instant"}]}}`+"\n", i)
		_, _ = f.WriteString(line)
		f.Close()
		r.note(fmt.Sprintf("exit%d", code))
		if code != 0 && code != 4 {
			r.fail("%s: fix exit %d: %s", trial, code, out)
		}
		if lineCheck(r, trial, session, line, "after fix") {
			undoKeeps(h, r, trial, dir, state, session, line)
		}
	}
}

// fullStateDisk: the state directory on a small tmpfs (root only) left with 4 to 80 KiB free:
// every file old or new; when fix failed (exit not 0) after rewriting anything it names the run
// to undo; once space is back, undo restores exactly.
func fullStateDisk(h *harness, r *report) {
	mnt := filepath.Join(h.t.TempDir(), "small")
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		h.t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", mnt).CombinedOutput(); err != nil {
		r.note("skipped-needs-root-mount")
		fmt.Printf("torture: full-state-disk skipped: cannot mount a tmpfs (%v: %s)\n", err, bytes.TrimSpace(out))
		return
	}
	_ = exec.Command("umount", mnt).Run()
	for i, free := 0, 4; free <= 80; i, free = i+1, free+4 {
		r.Trials++
		trial := fmt.Sprintf("trial %d (%d KiB free)", i, free)
		if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", mnt).Run(); err != nil {
			r.fail("%s: mount: %v", trial, err)
			return
		}
		fill := filepath.Join(mnt, "fill")
		_ = os.WriteFile(fill, make([]byte, (128-free)<<10), 0o600) // as much as fits
		base := h.t.TempDir()
		dir := filepath.Join(base, "dot-qwen")
		copyTree(h.t, filepath.Join(h.corpus, "projects/-home-demo-src-lab"), dir) // small: the fixture sessions only
		before := sums(h.t, dir)
		state := filepath.Join(mnt, "state")
		code, out := h.sessionfix("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		r.note(fmt.Sprintf("exit%d", code))
		changed := 0
		for rel, sum := range sums(h.t, dir) {
			if sum != before[rel] {
				changed++
			}
		}
		// --quiet is silent on success (issue 23 item 11): a run that ended 0 is undone below
		// (undo --last); one that failed must say how to undo what it rewrote.
		if changed > 0 && code != 0 && !strings.Contains(out, "undo") {
			r.fail("%s: %d files rewritten (exit %d) and no undo hint: %s", trial, changed, code, out)
		}
		if code == 0 && strings.Contains(out, "no space left") {
			r.fail("%s: a full disk ended with exit 0: %s", trial, out)
		}
		os.Remove(fill)
		uout := ""
		if changed > 0 {
			r.note("rewrote")
			var ucode int
			if ucode, uout = h.sessionfix("undo", "--last", "--state-dir", state); ucode != 0 {
				r.fail("%s: undo exit %d: %s", trial, ucode, uout)
			}
		}
		for rel, sum := range sums(h.t, dir) {
			if sum != before[rel] {
				r.fail("%s: after undo %s is not the original (fix exit %d: %s; undo: %s)", trial, rel, code, out, uout)
			}
		}
		if err := exec.Command("umount", mnt).Run(); err != nil {
			r.fail("%s: umount: %v", trial, err)
			return
		}
	}
}
