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
	// With pairSpec.server: the medians of the CPU the server's processes spent during each
	// sessionfix run and each floor run, and of the floor's own CPU.
	sfServer, floorServer, floorCPU time.Duration
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
	afterFl   func(i int) error // untimed, after each floor run (may be nil)
	// server, when not nil, returns the CPU time a server's processes have spent so far (a
	// database server both commands talk to): read before and after each timed run.
	server func() (time.Duration, error)
}

// pairs runs the pairs of p and returns the medians and the median of the per-pair ratios.
func pairs(p pairSpec) (pairResult, error) {
	var fl, s, c, fc, srvS, srvF, ratios, cratios []float64
	var res pairResult
	// timed runs argv, with the server's CPU during it when p.server is set.
	timed := func(argv []string) (run, float64, error) {
		var before time.Duration
		if p.server != nil {
			var err error
			if before, err = p.server(); err != nil {
				return run{}, 0, err
			}
		}
		r, err := timeCmd(argv...)
		if err != nil || p.server == nil {
			return r, 0, err
		}
		after, err := p.server()
		return r, (after - before).Seconds(), err
	}
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
				var srv float64
				if f, srv, err = timed(p.floor(i)); err != nil {
					return res, err
				}
				srvF = append(srvF, srv)
				if f.exit != 0 {
					return res, fmt.Errorf("floor %v: exit %d", p.floor(i), f.exit)
				}
				if p.afterFl != nil {
					if err := p.afterFl(i); err != nil {
						return res, err
					}
				}
				continue
			}
			var err error
			var srv float64
			if r, srv, err = timed(p.sf(i)); err != nil {
				return res, err
			}
			srvS = append(srvS, srv)
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
		fc = append(fc, f.cpu.Seconds())
		ratios = append(ratios, r.wall.Seconds()/f.wall.Seconds())
		cratios = append(cratios, r.cpu.Seconds()/f.cpu.Seconds())
		fmt.Fprintf(os.Stderr, "  pair %d: floor %.2fs wall %.2fs CPU; sessionfix %.2fs wall %.2fs CPU %.1f MiB RSS (%.2f× wall, %.2f× CPU)\n",
			i+1, f.wall.Seconds(), f.cpu.Seconds(), r.wall.Seconds(), r.cpu.Seconds(), float64(r.maxRSS)/(1<<20), ratios[len(ratios)-1], cratios[len(cratios)-1])
		if p.server != nil {
			fmt.Fprintf(os.Stderr, "          server CPU: %.2fs during the floor, %.2fs during sessionfix\n", srvF[len(srvF)-1], srvS[len(srvS)-1])
		}
	}
	res.pairs = p.n
	res.floor, res.sf, res.sfCPU = dur(median(fl)), dur(median(s)), dur(median(c))
	res.ratio, res.cpuRatio = median(ratios), median(cratios)
	res.floorCPU = dur(median(fc))
	if p.server != nil {
		res.sfServer, res.floorServer = dur(median(srvS)), dur(median(srvF))
	}
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
