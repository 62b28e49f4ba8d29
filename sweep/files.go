package sweep

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/results"
)

// WriteFiles writes sweep.json (atomically) and sweep.csv into dir: one
// row per step, with its kind (ladder, refine, recheck) and the
// cool-down before it in the last columns.
func WriteFiles(dir string, sw *results.Sweep) error {
	if err := results.WriteJSON(filepath.Join(dir, "sweep.json"), sw); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write([]string{"step", "by", "value", "offered_rate", "achieved_rate", "count", "errors", "error_rate", "dropped", "faulty_streams",
		"p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms", "service_p99_ms", "sessions", "generator_cores", "generator_rss_mb",
		"target_cores", "target_cpu_us_per_op", "target_rss_mb", "target_fds", "pass", "reasons", "kind", "cool_down_probes", "cool_down_s", "cool_down_settled"})
	for _, s := range sw.Results {
		probes, secs, settled := "", "", ""
		if c := s.CoolDown; c != nil {
			probes, secs, settled = strconv.Itoa(c.Probes), f3(c.Seconds), strconv.FormatBool(c.Settled)
		}
		cw.Write([]string{strconv.Itoa(s.N), s.By, f3(s.Value), f3(s.Offered), f3(s.Achieved), i64(s.Count), i64(s.Errors), f3(s.ErrorRate),
			i64(s.Dropped), i64(s.Faulty), f3(s.Latency.P50), f3(s.Latency.P90), f3(s.Latency.P99), f3(s.Latency.P999), f3(s.Latency.Max),
			f3(s.Service.P99), i64(s.Sessions), f3(s.GenCores), f3(s.GenRSSMB), f3(s.TgtCores), f3(s.TgtCPUOp), f3(s.TgtRSSMB),
			strconv.Itoa(s.TgtFDs), strconv.FormatBool(s.Pass), strings.Join(s.Reasons, "; "), kind(s), probes, secs, settled})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// kind is a step's kind in sweep.csv: "" (the ladder), "refine" (a
// bisect step) or "recheck" (the highest passing load again after an
// overload).
func kind(s results.SweepStep) string {
	switch {
	case s.Refine:
		return "refine"
	case s.Recheck:
		return "recheck"
	}
	return ""
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
func i64(v int64) string  { return strconv.FormatInt(v, 10) }
