package metrics

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// SoakPoint is one interval of a soak, as the verdicts need it.
type SoakPoint struct {
	T       float64 `json:"t_s"` // end of the interval, since the start
	Count   int64   `json:"count"`
	P99     float64 `json:"p99_ms"`
	Errors  int64   `json:"errors"`
	Faulty  int64   `json:"faulty_streams"`
	SelfMB  float64 `json:"self_rss_mb"`
	TgtMB   float64 `json:"target_rss_mb"`
	TgtFDs  int     `json:"target_fds"`
	HasTgt  bool    `json:"has_target"`
	Measure bool    `json:"measure"`
}

// SoakVerdict is one pass/fail line of a soak.
type SoakVerdict struct {
	Name    string  `json:"name"`
	Checked bool    `json:"checked"` // false: not applicable here (then it passes)
	Pass    bool    `json:"pass"`
	Value   float64 `json:"value"` // the measured slope or count
	Unit    string  `json:"unit"`
	Detail  string  `json:"detail"`
}

// Soak is soak.json: the verdicts and the points they came from.
type Soak struct {
	DurationS float64       `json:"duration_s"`
	Verdicts  []SoakVerdict `json:"verdicts"`
	Pass      bool          `json:"pass"`
	// Interrupted: the soak was stopped early (Ctrl-C); the verdicts
	// judge what ran, PlannedS seconds were planned.
	Interrupted bool        `json:"interrupted,omitempty"`
	PlannedS    float64     `json:"planned_s,omitempty"`
	Points      []SoakPoint `json:"points,omitempty"`
}

// TheilSen returns the Theil–Sen slope of y on x: the median of the
// slopes between every pair of points, robust to outliers and to the
// sawtooth of a garbage-collected heap. Series longer than 400 points are
// thinned evenly first.
func TheilSen(x, y []float64) float64 {
	if len(x) > 400 {
		step := float64(len(x)) / 400
		var tx, ty []float64
		for i := 0.0; int(i) < len(x); i += step {
			tx, ty = append(tx, x[int(i)]), append(ty, y[int(i)])
		}
		x, y = tx, ty
	}
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	slices.Sort(slopes)
	return slopes[len(slopes)/2]
}

// Median returns the middle value of v (the upper one of an even count);
// 0 for an empty v. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// SoakVerdicts judges a soak from its interval points and its summary:
//
//   - latency drift: the Theil–Sen slope of interval p99 over the measured
//     window; fails when it adds more than max(50 % of the median p99,
//     2 ms) over the run;
//   - correctness drift: replay-ledger faults over time; fails on any
//     faulty stream (response or GET streams);
//   - target leak (with a target process): Theil–Sen slopes of its RSS and
//     open files over the last two thirds of the window (the first third
//     is warm-up of caches and stores); fails when RSS grows by more than
//     max(5 % of its median, 8 MB) per hour, or open files by more than
//     max(10, 10 %) per hour;
//   - session hygiene: a deleted session must answer 404; fails on any
//     probe that did not.
func SoakVerdicts(points []SoakPoint, s *Summary) *Soak {
	var m []SoakPoint
	for _, p := range points {
		if p.Measure {
			m = append(m, p)
		}
	}
	out := &Soak{Points: points, Pass: true}
	if len(m) > 0 {
		out.DurationS = round3(m[len(m)-1].T - m[0].T)
	}
	add := func(v SoakVerdict) {
		if v.Checked && !v.Pass {
			out.Pass = false
		}
		if !v.Checked {
			v.Pass = true
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	hours := out.DurationS / 3600

	// Latency drift.
	{
		var xs, ys []float64
		for _, p := range m {
			if p.Count > 0 {
				xs, ys = append(xs, p.T), append(ys, p.P99)
			}
		}
		v := SoakVerdict{Name: "latency drift", Unit: "ms/h"}
		if len(xs) >= 10 {
			slope := TheilSen(xs, ys) * 3600
			med := Median(ys)
			drift := slope * hours
			limit := math.Max(0.5*med, 2)
			v.Checked, v.Value, v.Pass = true, round3(slope), drift <= limit
			v.Detail = fmt.Sprintf("interval p99 slope %+.2f ms/h: %+.2f ms over the run (median p99 %s ms; limit %+.2f ms)", slope, drift, ms(med), limit)
		} else {
			v.Detail = "too few intervals"
		}
		add(v)
	}

	// Correctness drift.
	{
		var faulty, firstHalf int64
		for i, p := range m {
			faulty += p.Faulty
			if i < len(m)/2 {
				firstHalf += p.Faulty
			}
		}
		var get int64
		if g := s.GETStreams; g != nil && g.Ledger != nil {
			get = g.Ledger.Faulty
		}
		v := SoakVerdict{Name: "correctness drift", Unit: "faulty streams", Checked: true, Value: float64(faulty + get)}
		v.Pass = faulty+get == 0
		judged := int64(0)
		if l := s.All.Ledger; l != nil {
			judged = l.Streams
		}
		v.Detail = fmt.Sprintf("%d of %d response streams faulty (%d in the first half, %d in the second), %d GET streams faulty", faulty, judged, firstHalf, faulty-firstHalf, get)
		add(v)
	}

	// Target leak.
	{
		var xs, rss, fds []float64
		for _, p := range m {
			if p.HasTgt {
				xs, rss, fds = append(xs, p.T), append(rss, p.TgtMB), append(fds, float64(p.TgtFDs))
			}
		}
		v := SoakVerdict{Name: "target leak", Unit: "MB/h"}
		if len(xs) >= 15 {
			from := len(xs) / 3
			rs := TheilSen(xs[from:], rss[from:]) * 3600
			fs := TheilSen(xs[from:], fds[from:]) * 3600
			medR, medF := Median(rss[from:]), Median(fds[from:])
			limR, limF := math.Max(0.05*medR, 8), math.Max(10, 0.1*medF)
			v.Checked, v.Value = true, round3(rs)
			v.Pass = rs <= limR && fs <= limF
			v.Detail = fmt.Sprintf("RSS %+.1f MB/h (median %.0f MB, limit %.1f MB/h), open files %+.1f/h (median %.0f, limit %.0f/h), over the last two thirds", rs, medR, limR, fs, medF, limF)
		} else if len(xs) == 0 {
			v.Detail = "not checked: no target process (--target-pid)"
		} else {
			v.Detail = "too few samples"
		}
		add(v)
	}

	// Session hygiene.
	{
		v := SoakVerdict{Name: "session hygiene", Unit: "faults"}
		if h := s.Sessions.Hygiene; h != nil && h.Probed > 0 {
			v.Checked, v.Value, v.Pass = true, float64(h.Faulty), h.Faulty == 0
			v.Detail = fmt.Sprintf("%d deleted sessions probed: %d still served, %d answered a status other than 404%s", h.Probed, h.Verdicts["deleted-session-accepted"], h.Verdicts["wrong-missing-session-status"], statusList(h.Statuses))
		} else {
			v.Detail = "not checked: no deleted session was probed (a stateless server, or check_deleted off)"
		}
		add(v)
	}
	return out
}

// WriteSoakText prints the verdict table.
func WriteSoakText(w io.Writer, sk *Soak) error {
	p := &printer{w: w}
	p.f("Soak verdicts (%.0f s measured)\n", sk.DurationS)
	for _, v := range sk.Verdicts {
		mark := "PASS"
		switch {
		case !v.Checked:
			mark = "n/a "
		case !v.Pass:
			mark = "FAIL"
		}
		p.f("  %s  %-18s %s\n", mark, v.Name, v.Detail)
	}
	verdict := map[bool]string{true: "PASS", false: "FAIL"}[sk.Pass]
	if sk.Interrupted {
		p.f("Soak: %s (interrupted after %.0f s of %.0f s: the verdicts judge what ran)\n", verdict, sk.DurationS, sk.PlannedS)
	} else {
		p.f("Soak: %s\n", verdict)
	}
	return p.err
}
