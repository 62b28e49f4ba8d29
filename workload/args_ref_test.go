package workload

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// callCount sends n calls of p's count op, compiled, to a reference
// server through one driver session — VU vu, iterations 0 … n-1, as the
// engine numbers them — and returns the keys the count tool executed and
// how often. Every call must succeed.
func callCount(t *testing.T, p *profile.Profile, vu, n int) map[string]int64 {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p.URL = srv.URL()
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := driver.NewSession(&pl.Driver, vu)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	for i := range n {
		res.Reset()
		res.VU, res.Iteration = vu, int64(i)
		s.Do(t.Context(), pl.Ops[0], &res)
		if res.Err != nil {
			t.Fatalf("call %d: %v", i, res.Err)
		}
	}
	st := srv.Stats()
	if st.ToolCalls != int64(n) {
		t.Fatalf("%d tool calls executed, want %d", st.ToolCalls, n)
	}
	return st.Executions
}

// countProfile is a profile of one call of the count tool with args.
func countProfile(args map[string]any) *profile.Profile { return argProfile("count", args) }

// {{seq}} over N calls: the count tool sees N distinct keys, 1 … N, once
// each; {{rand_int 0 1}} as the whole ms value arrives as a JSON number
// (the tool's schema refuses a string).
func TestRefServerSeesSeq(t *testing.T) {
	const n = 50
	got := callCount(t, countProfile(map[string]any{"key": "k{{seq}}", "ms": "{{rand_int 0 1}}"}), 0, n)
	want := map[string]int64{}
	for i := 1; i <= n; i++ {
		want["k"+strconv.Itoa(i)] = 1
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys the count tool saw (-want +got):\n%s", diff)
	}
}

// {{rand_int 1 5}}: every key within 1 … 5 and, over 200 calls, all five.
func TestRefServerSeesRandInt(t *testing.T) {
	const n = 200
	got := callCount(t, countProfile(map[string]any{"key": "r{{rand_int 1 5}}"}), 3, n)
	if diff := cmp.Diff([]string{"r1", "r2", "r3", "r4", "r5"}, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("distinct keys (-want +got):\n%s", diff)
	}
	var total int64
	for _, c := range got {
		total += c
	}
	if total != n {
		t.Errorf("%d executions, want %d", total, n)
	}
}

// A CSV file in sequential order, 3 rows × 4 iterations: each row's value
// reaches the server exactly 4 times, escaped so it arrives as written
// (quotes, comma, newline, non-ASCII).
func TestRefServerSeesCSVRowsSequential(t *testing.T) {
	csvFile := writeFile(t, "cities.csv", "city,n\nZürich,1\n\"São \"\"Paulo\"\", BR\",2\n\"two\nlines\",3\n")
	p := countProfile(map[string]any{"key": "{{.city}}"})
	p.Ops[0].Data = &argtmpl.DataSpec{File: csvFile}
	got := callCount(t, p, 0, 12)
	want := map[string]int64{"Zürich": 4, `São "Paulo", BR`: 4, "two\nlines": 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys the count tool saw (-want +got):\n%s", diff)
	}
}

// A JSONL file in random order: every row is drawn over 300 calls, and a
// numeric field sent whole arrives as a JSON number (ms).
func TestRefServerSeesJSONLRowsRandom(t *testing.T) {
	jsonl := writeFile(t, "users.jsonl", `{"user":"ann","ms":0}`+"\n"+`{"user":"bob","ms":1}`+"\n\n"+`{"user":"cy","ms":0}`+"\n")
	p := countProfile(map[string]any{"key": "{{.user}}", "ms": "{{.ms}}"})
	p.Data = &argtmpl.DataSpec{File: jsonl, Order: argtmpl.OrderRandom}
	got := callCount(t, p, 1, 300)
	if diff := cmp.Diff([]string{"ann", "bob", "cy"}, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("distinct keys (-want +got):\n%s", diff)
	}
}

// {{uuid}}: N calls, N distinct version 4 UUIDs.
func TestRefServerSeesUUIDs(t *testing.T) {
	const n = 100
	got := callCount(t, countProfile(map[string]any{"key": "{{uuid}}"}), 0, n)
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for k, c := range got {
		if !re.MatchString(k) || c != 1 {
			t.Errorf("key %q executed %d times: want a version 4 UUID, once", k, c)
		}
	}
	if len(got) != n {
		t.Errorf("%d distinct UUIDs, want %d", len(got), n)
	}
}

// A whole run (closed model, 3 VUs): the engine numbers VUs and their
// iterations, so the count tool sees v1 … v3, each with iterations 0 … k-1
// once, and nothing else.
func TestRunSendsVUAndIteration(t *testing.T) {
	t.Parallel()
	p := countProfile(map[string]any{"key": "v{{vu}}-i{{iteration}}"})
	p.VUs, p.Duration, p.Protocol = 3, profile.Duration(300*time.Millisecond), ""
	sum, st := runRef(t, refserver.Options{}, p)
	if sum.All.Errors != 0 {
		t.Fatalf("%d errors", sum.All.Errors)
	}
	perVU := map[int]int{}
	for k := range st.Executions {
		var vu, it int
		if _, err := fmt.Sscanf(k, "v%d-i%d", &vu, &it); err != nil {
			t.Fatalf("key %q: %v", k, err)
		}
		perVU[vu]++
	}
	want := map[string]int64{}
	for vu, n := range perVU {
		for it := range n {
			want[fmt.Sprintf("v%d-i%d", vu, it)] = 1
		}
	}
	if diff := cmp.Diff(want, st.Executions); diff != "" {
		t.Errorf("keys (-want +got): iterations of a VU must run 0 … k-1, once each:\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, slices.Sorted(maps.Keys(perVU))); diff != "" {
		t.Errorf("VUs (-want +got):\n%s", diff)
	}
	if int64(len(st.Executions)) != st.ToolCalls {
		t.Errorf("%d keys, %d tool calls: want one key per call", len(st.Executions), st.ToolCalls)
	}
}

// Lanes and parallel steps send requests of one VU at once: each still
// gets an iteration of its own, so no two requests of a run share a
// (vu, iteration) key — with --concurrency 3, and with a scenario step
// fired 3 at once.
func TestLanesAndParallelStepsGetTheirOwnIteration(t *testing.T) {
	t.Parallel()
	for _, scenario := range []bool{false, true} {
		p := countProfile(map[string]any{"key": "v{{vu}}-i{{iteration}}"})
		p.VUs, p.Duration, p.Protocol = 2, profile.Duration(300*time.Millisecond), ""
		if scenario {
			p.Ops[0].Name = "count"
			p.Scenario = []profile.StepSpec{{Op: "count", Parallel: 3}, {Op: "count"}}
		} else {
			p.Concurrency = 3
		}
		sum, st := runRef(t, refserver.Options{}, p)
		if sum.All.Errors != 0 || st.ToolCalls < 10 {
			t.Fatalf("scenario %v: %d errors, %d calls", scenario, sum.All.Errors, st.ToolCalls)
		}
		for k, n := range st.Executions {
			if n != 1 {
				t.Fatalf("scenario %v: key %q sent %d times", scenario, k, n)
			}
		}
		if int64(len(st.Executions)) != st.ToolCalls {
			t.Fatalf("scenario %v: %d keys for %d calls", scenario, len(st.Executions), st.ToolCalls)
		}
	}
}
