package verdict

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
)

// Every warning id has its section in docs/troubleshooting.md, with its
// cause and remedy; and every id a warning is given with is in
// WarningIDs.
func TestEveryWarningHasAnEntry(t *testing.T) {
	doc, err := os.ReadFile("../docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	parts := regexp.MustCompile(`(?m)^## (W-[A-Z0-9-]+)\n`).FindAllStringSubmatchIndex(string(doc), -1)
	for i, p := range parts {
		end := len(doc)
		if i+1 < len(parts) {
			end = parts[i+1][0]
		}
		sections[string(doc[p[2]:p[3]])] = string(doc[p[1]:end])
	}
	for _, id := range WarningIDs {
		sec, ok := sections[id]
		if !ok {
			t.Errorf("%s has no section in docs/troubleshooting.md", id)
			continue
		}
		for _, want := range []string{"**Cause:**", "**Remedy:**"} {
			if !strings.Contains(sec, want) {
				t.Errorf("%s: its section has no %s", id, want)
			}
		}
	}
	// Every warning the summaries of this file's cases give is listed.
	for _, s := range []*results.Summary{lagged(1000, 50), dropping(100, 100), busyGen()} {
		for _, w := range Warnings(s) {
			if !strings.Contains(strings.Join(WarningIDs, " "), w.ID) || w.Cause == "" || w.Remedy == "" {
				t.Errorf("warning %+v: not in WarningIDs, or without cause or remedy", w)
			}
		}
	}
}

// record plants n results of an op sent lag after its intended start,
// answered svc after the send, into a recorder, and returns its "all"
// row over secs.
func record(t *testing.T, rec *metrics.Recorder, n int, lag, svc time.Duration) {
	t.Helper()
	at := time.Unix(1_700_000_000, 0)
	for i := range n {
		intended := at.Add(time.Duration(i) * time.Millisecond)
		r := &driver.Result{Op: 0, Intended: intended, Start: intended.Add(lag), FirstByte: intended.Add(lag + svc/2), End: intended.Add(lag + svc), Class: driver.ClassOK, Status: 200}
		rec.Shard(i).Record(r)
	}
}

// summaryOf is an open-model summary of what rec recorded.
func summaryOf(rec *metrics.Recorder, secs float64) *results.Summary {
	rec.Tick(time.Unix(1_800_000_000, 0), time.Time{})
	ops, all := rec.Summarize(secs)
	return &results.Summary{Model: "open", TargetRate: float64(all.Count) / secs, DurationS: secs, VUs: 10, MaxVUs: 100, Ops: ops, All: all,
		Generator: results.Generator{NumCPU: 8, GOMAXPROCS: 8, Cores: 1, StartLag: results.LatencyOf(rec.StartLag()), LateWhy: "every VU was busy waiting on the target when they were due"}}
}

// Planted: 1000 ops answered in 5 ms, 30 of them (3 %) sent 40 ms late
// (lag 89 % of their response time): the lag changed what was measured,
// and the warning says so with the exact count.
func TestStartLagWarnsWhenItChangesWhatWasMeasured(t *testing.T) {
	rec := metrics.NewRecorder([]string{"tools/call:echo"}, 4)
	record(t, rec, 970, 100*time.Microsecond, 5*time.Millisecond)
	record(t, rec, 30, 40*time.Millisecond, 5*time.Millisecond)
	s := summaryOf(rec, 10)
	if s.All.LateStarts != 30 {
		t.Fatalf("late starts %d, want 30", s.All.LateStarts)
	}
	ws := Warnings(s)
	if len(ws) != 1 || ws[0].ID != WStartLag || !strings.HasPrefix(ws[0].Text, "30 of 1000 ops (3.0%) started more than 10% of their response time late") ||
		ws[0].Cause != "every VU was busy waiting on the target when they were due" || !strings.Contains(ws[0].Remedy, "profile.Profile.VUs N") {
		t.Fatalf("warnings %+v", ws)
	}
}

// A busy but harmless lag: every op sent 30 ms late (start lag p99 30 ms,
// which the old fixed 10 ms rule warned on) but answered in 1 s, so the
// lag is 3 % of each response time: no warning. Nor for a sub-millisecond
// lag on sub-millisecond answers (below the 1 ms floor).
func TestStartLagBusyButHarmlessDoesNotWarn(t *testing.T) {
	rec := metrics.NewRecorder([]string{"tools/call:echo"}, 4)
	record(t, rec, 1000, 30*time.Millisecond, time.Second)
	record(t, rec, 1000, 400*time.Microsecond, 300*time.Microsecond)
	s := summaryOf(rec, 10)
	if s.All.LateStarts != 0 || s.Generator.StartLag.P99 < 10 {
		t.Fatalf("late starts %d, start lag p99 %v ms: want 0 and over 10", s.All.LateStarts, s.Generator.StartLag.P99)
	}
	if ws := Warnings(s); len(ws) != 0 {
		t.Fatalf("warnings %+v, want none", ws)
	}
}

// lagged is an open-model summary of n ops of which late started late.
func lagged(n, late int64) *results.Summary {
	return &results.Summary{Model: "open", TargetRate: 100, DurationS: 10, VUs: 10, MaxVUs: 100,
		All:       results.OpSummary{Name: "all", Count: n, LateStarts: late},
		Generator: results.Generator{NumCPU: 8, GOMAXPROCS: 8, Cores: 1}}
}

func dropping(count, dropped int64) *results.Summary {
	s := lagged(count, 0)
	s.Dropped, s.DroppedRate = dropped, float64(dropped)/float64(count+dropped)
	return s
}

func busyGen() *results.Summary {
	s := lagged(100, 0)
	s.Generator.Cores = 7.5
	return s
}

// A merged run is judged on its merged numbers: segment 0's 30 late
// starts of 1000 (3 %) would warn alone, but merged with segment 1's
// 3000 clean ops they are 0.75 %: no start-lag warning. A segment whose
// generator was busy is named (its share of the load was understated).
func TestMergedRunJudgedOnMergedCounts(t *testing.T) {
	if ws := Warnings(lagged(1000, 30)); len(ws) != 1 || ws[0].ID != WStartLag {
		t.Fatalf("segment 0 alone: %+v, want W-START-LAG", ws)
	}
	merged := lagged(4000, 30)
	merged.Generator.Cores, merged.Generator.GOMAXPROCS = 9, 16 // two processes of 8 summed: 56 %
	merged.Segments = []results.SegmentResult{
		{Dir: "s0", Segment: &results.SegmentInfo{Segment: "0:1/2"}, Generator: results.Generator{GOMAXPROCS: 8, NumCPU: 8, Cores: 7}},
		{Dir: "s1", Segment: &results.SegmentInfo{Segment: "1/2:1"}, Generator: results.Generator{GOMAXPROCS: 8, NumCPU: 8, Cores: 2}},
	}
	ws := Warnings(merged)
	if len(ws) != 1 || ws[0].ID != WGeneratorCPU || !strings.HasPrefix(ws[0].Text, "mcpbench's segment 0:1/2 used 7.00 of its 8 cores:") {
		t.Fatalf("merged: %+v, want only W-GENERATOR-CPU naming segment 0:1/2", ws)
	}
	merged.Segments[0].Generator.Cores = 2
	if ws := Warnings(merged); len(ws) != 0 {
		t.Fatalf("merged, no segment busy: %+v, want none", ws)
	}
}

// Drops over 1 % warn with their cause; 1 % or less, or a closed model,
// do not.
func TestDropWarningRule(t *testing.T) {
	if ws := Warnings(dropping(990, 10)); len(ws) != 0 {
		t.Errorf("1.0%% dropped: %+v", ws)
	}
	ws := Warnings(dropping(980, 20))
	if len(ws) != 1 || ws[0].ID != WDropsVUSpawn || !strings.Contains(ws[0].Remedy, "profile.Profile.VUs 100") {
		t.Errorf("2%% dropped, 10 of max 100 VUs: %+v", ws)
	}
	s := dropping(980, 20)
	s.VUs = 100
	if ws := Warnings(s); len(ws) != 1 || ws[0].ID != WDropsVUCap {
		t.Errorf("at the cap: %+v", ws)
	}
	s.Saturation = "its service time climbed during the run (mean 80.0 ms at the end)"
	if ws := Warnings(s); len(ws) != 1 || ws[0].ID != WDropsSaturated || !strings.Contains(ws[0].Cause, "climbed") {
		t.Errorf("saturated: %+v", ws)
	}
	s.Generator.Cores = 7
	if ws := Warnings(s); len(ws) != 2 || ws[0].ID != WDropsCPU || ws[1].ID != WGeneratorCPU {
		t.Errorf("busy generator: %+v", ws)
	}
	s = dropping(980, 20)
	s.Model = "closed"
	if ws := Warnings(s); len(ws) != 0 {
		t.Errorf("closed model: %+v", ws)
	}
}
