// Package progress is the progress bar of a run on a terminal (issue 8 item 15): bytes read
// as the bar (schollz/progressbar), stores counted in its description.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress bar rules (issue 8 item 15): on a terminal, a run shows a bar at once when it is
// big — progressBytes of stores or progressFiles stores — and any other run shows it once it
// has taken progressDelay, so a slow run over few small files (a busy disk, a SQLite lock)
// is not silent either.
const (
	progressBytes = 64 << 20
	progressFiles = 200
	progressDelay = time.Second
)

// Bar is the bar of one pipeline run: bytes read as the bar, and a description that
// counts stores ("reading 12/300 files", with --apply "rewriting 12/300 files"). The bar is
// created when it may be shown (at once for a big run, else after progressDelay by now);
// AddBytes and StoreDone may be called from different goroutines.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	now   func() time.Time
	start time.Time
	bar   *progressbar.ProgressBar
	verb  string
	size  int64
	read  int64
	total int
	done  int
}

// New returns the bar, drawn on w, for a run over files stores of size bytes (apply: one that
// rewrites them; now: the clock, nil for time.Now), or nil when terminal is false (standard
// error is not a terminal) or there is no store.
func New(w io.Writer, terminal bool, now func() time.Time, apply bool, files int, size int64) *Bar {
	if !terminal || files == 0 {
		return nil
	}
	p := &Bar{w: w, now: now, verb: "reading", size: max(size, 1), total: files}
	if p.now == nil {
		p.now = time.Now
	}
	p.start = p.now()
	if apply {
		p.verb = "rewriting"
	}
	if files >= progressFiles || size >= progressBytes {
		p.open()
	}
	return p
}

// open creates and draws the bar (p.mu held or not yet shared).
func (p *Bar) open() {
	p.bar = progressbar.NewOptions64(p.size, progressbar.OptionSetWriter(p.w),
		progressbar.OptionShowBytes(true), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
	p.bar.Describe(p.describe())
	if p.read > 0 {
		_ = p.bar.Add64(p.read)
	}
}

// due opens the bar once the run has taken progressDelay (p.mu held).
func (p *Bar) due() {
	if p.bar == nil && p.now().Sub(p.start) >= progressDelay {
		p.open()
	}
}

// describe is the bar's text: "rewriting 2608/5000 files".
func (p *Bar) describe() string {
	return fmt.Sprintf("%s %d/%s", p.verb, p.done, plural(p.total, "file"))
}

// AddBytes adds n bytes read.
func (p *Bar) AddBytes(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.read += n
	if p.bar != nil {
		_ = p.bar.Add64(n)
		return
	}
	p.due()
}

// StoreDone counts one store as done.
func (p *Bar) StoreDone() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.bar != nil {
		p.bar.Describe(p.describe())
		return
	}
	p.due()
}

// Finish ends the bar (cleared from the terminal) when it was shown.
func (p *Bar) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// plural is "1 file", "2 files" (reports.Plural's rule for these words).
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
