package results

import "path/filepath"

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
	// Stopping: the interval of the graceful stop after the window; it
	// holds measured ops that ended then (the summary counts them).
	Stopping bool `json:"stopping,omitempty"`
	// Sessions is the number of sessions open at the interval's end.
	Sessions int64 `json:"sessions,omitempty"`
}

// SoakVerdict is one pass/fail line of a soak.
type SoakVerdict struct {
	Name    string  `json:"name"`
	Checked bool    `json:"checked"` // false: nothing to judge here (n/a; never counted as passed)
	Pass    bool    `json:"pass"`
	Value   float64 `json:"value"` // the measured slope or count
	Unit    string  `json:"unit"`
	Detail  string  `json:"detail"`
	// Trends are the fitted lines the verdict judged, so a chart can draw
	// them over the points.
	Trends []SoakTrend `json:"trends,omitempty"`
}

// SoakTrend is a robust (Theil–Sen) line through a soak series over the
// span it was fitted on: y = Intercept + SlopePerS·t, t in seconds since
// the start.
type SoakTrend struct {
	Series    string  `json:"series"` // "p99_ms", "target_rss_mb", "target_fds" or their "_per_session"
	SlopePerS float64 `json:"slope_per_s"`
	Intercept float64 `json:"intercept"`
	FromS     float64 `json:"from_s"`
	ToS       float64 `json:"to_s"`
}

// Soak trend series.
const (
	SoakSeriesP99 = "p99_ms"
	SoakSeriesRSS = "target_rss_mb"
	SoakSeriesFDs = "target_fds"
	// The target's RSS and open files per session open (the leak verdict
	// when the sessions held vary).
	SoakSeriesRSSPerSession = "target_rss_mb_per_session"
	SoakSeriesFDsPerSession = "target_fds_per_session"
)

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
	// Verdict is the run's one verdict, the word of its report's verdict
	// line (OK, WARN, FAIL, NONE) once the soak's outcome is in it
	// (Summary.Soak); "" in a soak.json written before it was recorded.
	Verdict string `json:"verdict,omitempty"`
}

// SoakOutcome is what a soak's verdicts judged, as its run's verdict line
// reads it: Verdicts in all, Judged of them judged something (the others
// had nothing to judge: n/a), Failed the names of those that failed.
type SoakOutcome struct {
	Verdicts int      `json:"verdicts"`
	Judged   int      `json:"judged"`
	Failed   []string `json:"failed,omitempty"`
}

// Outcome counts sk's verdicts (see SoakOutcome).
func (sk *Soak) Outcome() *SoakOutcome {
	o := &SoakOutcome{Verdicts: len(sk.Verdicts)}
	for _, v := range sk.Verdicts {
		if v.Checked {
			o.Judged++
			if !v.Pass {
				o.Failed = append(o.Failed, v.Name)
			}
		}
	}
	return o
}

// FileSoak is a soak's verdicts beside its run's files (written by the
// soak package).
const FileSoak = "soak.json"

// ReadSoak reads soak.json from dir.
func ReadSoak(dir string) (*Soak, error) {
	var sk *Soak
	if err := readJSON(filepath.Join(dir, FileSoak), &sk); err != nil {
		return nil, err
	}
	return sk, nil
}
