package report

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
)

func result(op int, intendedMS, startMS, endMS int, class driver.Class, status int) *driver.Result {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := &driver.Result{Op: op, Intended: at(intendedMS), Start: at(startMS), FirstByte: at(startMS + 1), End: at(endMS), Class: class, Status: status}
	if class != driver.ClassOK {
		r.Err = errors.New(class.String())
	}
	return r
}

// The text report depends only on the summary: a summary read back from
// summary.json prints the same text.
func TestTextFromFileMatches(t *testing.T) {
	rec := metrics.NewRecorder([]string{"tools/call:echo", "ping"}, 4)
	for i := range 200 {
		rec.Shard(i).Record(result(i%2, 0, i%7, i%7+3, driver.ClassOK, 200))
	}
	rec.Shard(0).Record(result(1, 0, 0, 30, driver.ClassHTTPStatus, 503))
	rec.Tick(time.Now(), time.Time{})
	ops, all := rec.Summarize(2)
	s := &results.Summary{Tool: "mcpbench test", Target: "http://127.0.0.1:1/mcp", Protocol: "2025-11-25", Profile: "smoke", Model: "open",
		TargetRate: 100, Rate: all.Rate, DurationS: 2, VUs: 4, MaxVUs: 8, Ops: ops, All: all, Started: time.Unix(1, 0).UTC()}
	var a bytes.Buffer
	if err := WriteText(&a, s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "summary.json")
	if err := results.WriteJSON(path, s); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteText(&b, back)
	if diff := cmp.Diff(a.String(), b.String()); diff != "" {
		t.Fatalf("text from summary.json differs (-run +file):\n%s", diff)
	}
	for _, want := range []string{"p99.9", "tools/call:echo", "Service time", "coordinated omission", "http-status 1", "Errors: 1 of 201"} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, a.String())
		}
	}
}
