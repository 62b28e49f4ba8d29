// Command promcheck asks a Prometheus server that scraped a run's
// --prometheus endpoint (or received its --prometheus-rw pushes) what it
// saw, and compares that with the run's
// summary.json: the op rate (PromQL rate() over a stretch of the measured
// window) within a tolerance, and the final totals (ops, errors, the
// response-time histogram's count) exactly. scripts/check-prometheus.sh
// runs it; it exits 0 when everything agrees, 1 when not.
//
// -match selects the series (label matchers, e.g. instance="host"), so
// that one Prometheus can hold the scraped and the pushed copies apart.
//
//	go run ./scripts/promcheck -prometheus http://127.0.0.1:19090 -results DIR [-match 'instance="h"']
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcpbench/mcpbench/results"
)

func main() {
	prom := flag.String("prometheus", "http://127.0.0.1:19090", "Prometheus server (loopback)")
	dir := flag.String("results", "", "the run's results directory")
	tol := flag.Float64("tolerance", 0.01, "largest relative difference of the op rate")
	match := flag.String("match", "", `label matchers selecting the run's series (e.g. instance="host"); "" all`)
	flag.Parse()
	sel := ""
	if *match != "" {
		sel = "{" + *match + "}"
	}
	sum, err := results.ReadSummary(filepath.Join(*dir, results.FileSummary))
	if err != nil {
		fail("%v", err)
	}
	ok := true
	// The op rate as a Grafana panel asks for it, over 20 s of the
	// measured window (its first and last seconds left out).
	window := math.Min(20, sum.DurationS-6)
	at := sum.Started.Add(time.Duration((sum.WarmupS + 3 + window) * float64(time.Second)))
	q := fmt.Sprintf("sum(rate(mcpbench_ops_total%s[%ds]))", sel, int(window))
	rate, err := query(*prom, q, at)
	if err != nil {
		fail("%s: %v", q, err)
	}
	diff := math.Abs(rate-sum.All.Rate) / sum.All.Rate
	fmt.Printf("PromQL %s at %s: %.2f ops/s; summary: %.2f ops/s; difference %.3f%% (tolerance %.1f%%)\n",
		q, at.UTC().Format(time.RFC3339), rate, sum.All.Rate, 100*diff, 100**tol)
	if diff > *tol {
		ok = false
		fmt.Println("FAIL: the op rate Prometheus saw is not the summary's")
	}
	// The totals after the run (mcpbench --prometheus-linger waited for a
	// scrape after its end; --prometheus-rw flushed its last push).
	now := time.Now()
	for _, c := range []struct {
		name string
		want int64
	}{
		{"mcpbench_ops_total", sum.All.Count},
		{"mcpbench_op_errors_total", sum.All.Errors},
		{"mcpbench_op_duration_seconds_count", sum.All.Count},
	} {
		q := fmt.Sprintf("sum(max_over_time(%s%s[5m]))", c.name, sel)
		got, err := query(*prom, q, now)
		if err != nil {
			fail("%s: %v", q, err)
		}
		mark := "ok"
		if got != float64(c.want) {
			mark, ok = "FAIL", false
		}
		fmt.Printf("%-4s PromQL %s = %.0f; summary %d\n", mark, q, got, c.want)
	}
	if !ok {
		os.Exit(1)
	}
}

// query evaluates an instant query at t and returns its single value.
func query(prom, q string, t time.Time) (float64, error) {
	u := prom + "/api/v1/query?" + url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)}}.Encode()
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("prometheus: %s", body.Error)
	}
	if len(body.Data.Result) != 1 {
		return 0, fmt.Errorf("prometheus: %d series, want 1 (no data scraped?)", len(body.Data.Result))
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "promcheck: "+format+"\n", args...)
	os.Exit(1)
}
