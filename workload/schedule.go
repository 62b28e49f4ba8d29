package workload

import (
	"math"
	"time"
)

// Schedule paces an open-model run: when the next op is due. Waits come
// from absolute offsets since the start (never a per-op ticker), so a late
// wake-up does not shift the rest of the schedule. Implementations are
// immutable and safe for concurrent use.
type Schedule interface {
	// Pace returns how long after elapsed (time since start) op number
	// hits (0-based) is due. wait ≤ 0 means it is due now and -wait is how
	// late it already is; its intended start is elapsed + wait. stop is
	// true once the schedule has no more ops.
	Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool)
	// Rate is the target arrival rate (ops/s) at elapsed.
	Rate(elapsed time.Duration) float64
}

// Constant is a constant arrival rate for a duration.
type Constant struct {
	PerSec   float64       // ops per second, > 0
	Duration time.Duration // how long the schedule runs
}

var _ Schedule = Constant{}

// Pace implements Schedule: op h is due at h/PerSec seconds.
func (c Constant) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	due := time.Duration(float64(hits) / c.PerSec * float64(time.Second))
	if due >= c.Duration {
		return 0, true
	}
	return due - elapsed, false
}

// Rate implements Schedule.
func (c Constant) Rate(elapsed time.Duration) float64 {
	if elapsed >= c.Duration {
		return 0
	}
	return c.PerSec
}

// Stage is one segment of a ramping schedule: the rate moves linearly from
// the previous stage's Target (or the ramp's Start) to Target over Duration.
type Stage struct {
	Duration time.Duration
	Target   float64 // ops/s at the end of the stage
}

// Ramp is a piecewise-linear arrival rate (k6's ramping-arrival-rate).
type Ramp struct {
	Start  float64 // ops/s at time 0
	Stages []Stage
}

var _ Schedule = Ramp{}

// Rate implements Schedule.
func (r Ramp) Rate(elapsed time.Duration) float64 {
	from := r.Start
	for _, s := range r.Stages {
		if elapsed < s.Duration {
			return from + (s.Target-from)*float64(elapsed)/float64(s.Duration)
		}
		elapsed -= s.Duration
		from = s.Target
	}
	return 0
}

// Pace implements Schedule: op h is due when the integral of the rate
// reaches h.
func (r Ramp) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	need := float64(hits) // ops that must have been issued before op h
	from := r.Start
	var base time.Duration
	for _, s := range r.Stages {
		secs := s.Duration.Seconds()
		area := (from + s.Target) / 2 * secs
		if need < area {
			t := solveRamp(from, s.Target, secs, need)
			return base + time.Duration(t*float64(time.Second)) - elapsed, false
		}
		need -= area
		base += s.Duration
		from = s.Target
	}
	return 0, true
}

// solveRamp returns t in [0, T] with ∫0..t (a + (b−a)x/T) dx = n.
func solveRamp(a, b, T, n float64) float64 {
	k := (b - a) / T
	if math.Abs(k) < 1e-12 {
		if a <= 0 {
			return T
		}
		return n / a
	}
	// k/2 t² + a t − n = 0
	disc := a*a + 2*k*n
	if disc < 0 {
		return T
	}
	return (-a + math.Sqrt(disc)) / k
}

// When returns the first time at or after `after` when the ramp's rate is
// at least v (ok false when it never is again): for ramping VUs, when VU
// number v−0.5 becomes active.
func (r Ramp) When(v float64, after time.Duration) (time.Duration, bool) {
	from := r.Start
	var t0 time.Duration
	for _, s := range r.Stages {
		t1 := t0 + s.Duration
		if t1 > after {
			start := max(after, t0)
			if r.Rate(start) >= v {
				return start, true
			}
			if s.Target >= v && s.Target > from {
				// The rate crosses v inside the stage.
				t := t0 + time.Duration((v-from)/(s.Target-from)*float64(s.Duration))
				return max(t, start), true
			}
		}
		t0, from = t1, s.Target
	}
	return 0, false
}

// Peak is the highest rate (or VU count) the ramp reaches.
func (r Ramp) Peak() float64 {
	p := r.Start
	for _, s := range r.Stages {
		p = max(p, s.Target)
	}
	return p
}

// Arrivals returns how many ops a schedule makes due in [from, to) (for
// the interval's target rate: with a ramp it changes within an interval).
func Arrivals(s Schedule, from, to time.Duration) int64 {
	return due(s, to) - due(s, from)
}

// due counts the ops due before t: the first h whose due time is ≥ t.
func due(s Schedule, t time.Duration) int64 {
	lo, hi := uint64(0), uint64(1)
	for {
		if d, stop := s.Pace(0, hi); stop || d >= t {
			break
		}
		lo, hi = hi, hi*2
		if hi > 1<<40 {
			return int64(hi)
		}
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if d, stop := s.Pace(0, mid); !stop && d < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return int64(lo)
}
