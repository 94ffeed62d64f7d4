package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// run is one finished process.
type run struct {
	wall   time.Duration
	cpu    time.Duration // user + system
	maxRSS int64         // bytes
	exit   int
}

// timeCmd runs argv (no shell unless argv says so), its output thrown away, and measures it.
func timeCmd(argv ...string) (run, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = nil, nil
	return measure(cmd)
}

// timeCmdOut is timeCmd returning what argv wrote to its standard output (its standard error
// goes to ours).
func timeCmdOut(argv ...string) (run, string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	r, err := measure(cmd)
	return r, out.String(), err
}

// measure runs cmd and returns its wall and CPU time, peak RSS and exit status; an error when it
// could not be started or was killed by a signal.
func measure(cmd *exec.Cmd) (run, error) {
	start := time.Now()
	err := cmd.Run()
	r := run{wall: time.Since(start)}
	if cmd.ProcessState == nil {
		return r, fmt.Errorf("%s: %w", cmd.Args[0], err)
	}
	r.exit = cmd.ProcessState.ExitCode()
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = int64(ru.Maxrss) * 1024
	}
	if r.exit < 0 {
		return r, fmt.Errorf("%s: %w", cmd.Args[0], err)
	}
	return r, nil
}

// shell is argv running s with sh -c.
func shell(s string) []string { return []string{"sh", "-c", s} }

// pairResult is what pair measured.
type pairResult struct {
	floor, sf time.Duration // medians
	sfCPU     time.Duration // median CPU of the sessionfix runs
	ratio     float64       // median of the per-pair ratios
	cpuRatio  float64       // median of the per-pair ratios of CPU time (user + system, children included)
	maxRSS    int64         // largest sessionfix RSS
	exit      int           // the first non-zero sessionfix exit
	pairs     int
}

// pair runs prep (untimed, may be nil), floor, prep, sessionfix, n times in turn and returns the
// medians and the median of the per-pair ratios. prep gets the pair index and which run follows.
func pair(n int, prep func(i int, floor bool) error, floor, sf func(i int) []string) (pairResult, error) {
	return pairs(pairSpec{n: n, prep: prep, floor: floor, sf: sf})
}

// pairSpec is a measurement of n floor/sessionfix pairs.
type pairSpec struct {
	n         int
	prep      func(i int, floor bool) error // untimed, before each run (may be nil)
	floor, sf func(i int) []string
	sfFirst   bool              // each pair runs sessionfix, then the floor
	afterSF   func(i int) error // untimed, after each sessionfix run (may be nil)
}

// pairs runs the pairs of p and returns the medians and the median of the per-pair ratios.
func pairs(p pairSpec) (pairResult, error) {
	var fl, s, c, ratios, cratios []float64
	var res pairResult
	for i := 0; i < p.n; i++ {
		var f, r run
		for _, isFloor := range []bool{!p.sfFirst, p.sfFirst} {
			if p.prep != nil {
				if err := p.prep(i, isFloor); err != nil {
					return res, err
				}
			}
			if isFloor {
				var err error
				if f, err = timeCmd(p.floor(i)...); err != nil {
					return res, err
				}
				if f.exit != 0 {
					return res, fmt.Errorf("floor %v: exit %d", p.floor(i), f.exit)
				}
				continue
			}
			var err error
			if r, err = timeCmd(p.sf(i)...); err != nil {
				return res, err
			}
			if r.exit != 0 && res.exit == 0 {
				res.exit = r.exit
			}
			if p.afterSF != nil {
				if err := p.afterSF(i); err != nil {
					return res, err
				}
			}
		}
		res.maxRSS = max(res.maxRSS, r.maxRSS)
		fl = append(fl, f.wall.Seconds())
		s = append(s, r.wall.Seconds())
		c = append(c, r.cpu.Seconds())
		ratios = append(ratios, r.wall.Seconds()/f.wall.Seconds())
		cratios = append(cratios, r.cpu.Seconds()/f.cpu.Seconds())
		fmt.Fprintf(os.Stderr, "  pair %d: floor %.2fs wall %.2fs CPU; sessionfix %.2fs wall %.2fs CPU %.1f MiB RSS (%.2f× wall, %.2f× CPU)\n",
			i+1, f.wall.Seconds(), f.cpu.Seconds(), r.wall.Seconds(), r.cpu.Seconds(), float64(r.maxRSS)/(1<<20), ratios[len(ratios)-1], cratios[len(cratios)-1])
	}
	res.pairs = p.n
	res.floor, res.sf, res.sfCPU = dur(median(fl)), dur(median(s)), dur(median(c))
	res.ratio, res.cpuRatio = median(ratios), median(cratios)
	return res, nil
}

func dur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
