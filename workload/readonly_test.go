package workload

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
)

// planState is what of a plan Run once wrote (the protocol settled, the
// features switched off, ops taken out of the mix, the run's callback and
// client): a plan's fields must read the same before and after any run.
type planState struct {
	protocol, logLevel   string
	checkDeleted         bool
	driverCheckDeleted   bool
	churn                float64
	cum                  []int
	onUpdate, haveClient bool
}

func stateOf(pl *Plan) planState {
	return planState{
		protocol: pl.Driver.Protocol, logLevel: pl.Driver.LogLevel,
		checkDeleted: pl.CheckDeleted, driverCheckDeleted: pl.Driver.CheckDeleted,
		churn: pl.ChurnRate, cum: slices.Clone(pl.cum),
		onUpdate: pl.Driver.OnResourceUpdate != nil, haveClient: pl.Driver.HTTPClient != nil,
	}
}

func (s planState) equal(o planState) bool {
	return s.protocol == o.protocol && s.logLevel == o.logLevel && s.checkDeleted == o.checkDeleted &&
		s.driverCheckDeleted == o.driverCheckDeleted && s.churn == o.churn && slices.Equal(s.cum, o.cum) &&
		s.onUpdate == o.onUpdate && s.haveClient == o.haveClient
}

// Issue 35 item 3: Compile never writes the caller's profile, and the
// plan is read-only under Run, completely ("settled", then the deep
// cases of testPlanDeepReadOnly). Against a server that speaks only
// 2026-07-28, auto settles that version, switches churn and the
// deleted-session check off, takes logging/setLevel out of the mix and
// carries its level into _meta: all of it on the run's copy. The plan is
// run twice in turn and twice at once (-race), and reads the same after:
// its settings, and the whole plan dumped (dumpPlan).
func TestPlanReadOnlyUnderRun(t *testing.T) {
	t.Run("settled", testPlanSettledReadOnly)
	testPlanDeepReadOnly(t)
}

func testPlanSettledReadOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &profile.Profile{
			Name: "test", URL: "http://fake/mcp", Duration: profile.Duration(time.Second), VUs: 2,
			Churn: profile.Churn{Rate: 2}, CheckDeleted: true,
			Ops: []profile.OpSpec{
				{Method: "tools/call", Tool: "echo"},
				{Method: "logging/setLevel", Level: "debug"},
			},
		}
		pl, err := Compile(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.VUs != 2 || p.Seed != 0 || p.Protocol != "" || p.Ops[0].Weight != nil {
			t.Fatalf("Compile wrote the caller's profile: vus %d, seed %d, protocol %q, weight %v", p.VUs, p.Seed, p.Protocol, p.Ops[0].Weight)
		}
		if pl.Driver.HTTPClient != nil {
			t.Fatal("Compile with a nil client built one")
		}
		before := stateOf(pl)
		if before.protocol != "auto" || before.churn != 2 || !before.checkDeleted || slices.Equal(before.cum, []int{1, 1}) {
			t.Fatalf("the plan as compiled: %+v", before)
		}
		fake := modernOnlyFake()
		fake.Handle(mcptest.K("POST", mcptest.Any, "logging/setLevel", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.Result(r, map[string]any{})
		})
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		pl.Driver.HTTPClient = hc
		before = stateOf(pl)
		dump := dumpPlan(pl)
		run := func() {
			sum, err := Run(t.Context(), pl, Options{})
			if err != nil {
				t.Error(err)
				return
			}
			if sum.Protocol != "2026-07-28" || sum.All.Count == 0 {
				t.Errorf("protocol %s, %d ops: want 2026-07-28 and ops", sum.Protocol, sum.All.Count)
			}
		}
		for range 2 {
			run()
			if after := stateOf(pl); !after.equal(before) {
				t.Fatalf("Run wrote the plan: before %+v, after %+v", before, after)
			}
			if after := dumpPlan(pl); after != dump {
				t.Fatalf("Run wrote the plan (- before, + after):\n%s", diffDumps(dump, after))
			}
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(run)
		}
		wg.Wait()
		if after := stateOf(pl); !after.equal(before) {
			t.Fatalf("concurrent runs wrote the plan: before %+v, after %+v", before, after)
		}
		if after := dumpPlan(pl); after != dump {
			t.Fatalf("concurrent runs wrote the plan (- before, + after):\n%s", diffDumps(dump, after))
		}
	})
}

// readOnlyFake is a 2026-07-28-only server for the deep read-only test:
// tools/list lists echo (an output schema: the output_schema check) and
// hdr (an x-mcp-header annotation: PrepareOps sets its op's
// Mcp-Param-* headers); tools/call answers after 10 ms.
func readOnlyFake() *mcptest.ModernOnly {
	fake := slowFake(10 * time.Millisecond)
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/list", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"resultType": "complete", "tools": []any{
			map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"},
				"outputSchema": map[string]any{"type": "object"}},
			map[string]any{"name": "hdr", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}},
		}})
	})
	fake.Handle(mcptest.K("POST", mcptest.Any, "logging/setLevel", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{})
	})
	return mcptest.NewModernOnly(fake)
}

// testPlanDeepReadOnly: nothing reachable from a plan changes under Run — the ops (Mcp-Param-* headers PrepareOps sets under
// 2026-07-28, a Cancel op's fastest answer), the renderers ({{seq}}
// counters, a data file's sequential cursor, the execution segment, the
// run-time failures), the correlator's VU values, the output-schema
// store (the large-message budget is the run's too; small answers here
// leave it as it was either way). The plan, dumped whole, reads the same after two
// runs in turn and after two at once (-race: nothing shared is written).
func testPlanDeepReadOnly(t *testing.T) {
	csv := writeFile(t, "rows.csv", "city\nZürich\nLyon\nBerlin\n")
	mix := &profile.Profile{
		Name: "mix", URL: "http://fake/mcp", Duration: profile.Duration(time.Second), VUs: 2,
		Ops: []profile.OpSpec{
			{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"n": "{{seq}}", "city": "{{.city}}"},
				Data: &argtmpl.DataSpec{File: csv}, Checks: []string{"output_schema"}},
			{Method: "tools/call", Tool: "hdr", Arguments: map[string]any{"region": "eu"},
				Cancel: &profile.CancelSpec{After: profile.Duration(time.Hour), P: 1}},
			{Method: "logging/setLevel", Level: "debug"},
		},
	}
	scen := &profile.Profile{
		Name: "scenario", URL: "http://fake/mcp", Duration: profile.Duration(time.Second), VUs: 2,
		Ops: []profile.OpSpec{
			{Name: "list", Method: "tools/list"},
			{Name: "call", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": `{{step "list" "tools.0.name"}}`}},
		},
		Scenario: []profile.StepSpec{{Op: "list"}, {Op: "call"}},
	}
	half, err := ParseSegment("1/2", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*profile.Profile{mix, scen} {
		t.Run(p.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hc, stop := mcptest.ServePipe(readOnlyFake())
				defer stop()
				pl, err := Compile(p, hc)
				if err != nil {
					t.Fatal(err)
				}
				before := dumpPlan(pl)
				run := func() {
					sum, err := Run(t.Context(), pl, Options{Segment: half})
					if err != nil {
						t.Error(err)
						return
					}
					if sum.Protocol != "2026-07-28" || sum.All.Count == 0 {
						t.Errorf("protocol %s, %d ops: want 2026-07-28 and ops", sum.Protocol, sum.All.Count)
					}
				}
				for i := range 2 {
					run()
					if after := dumpPlan(pl); after != before {
						t.Fatalf("run %d wrote the plan (- before, + after):\n%s", i+1, diffDumps(before, after))
					}
				}
				var wg sync.WaitGroup
				for range 2 {
					wg.Go(run)
				}
				wg.Wait()
				if after := dumpPlan(pl); after != before {
					t.Fatalf("concurrent runs wrote the plan (- before, + after):\n%s", diffDumps(before, after))
				}
			})
		})
	}
}

// A second run of one plan starts afresh: its {{seq}} from 1, its data
// file's sequential rows from the first, as the first run did (they went
// on from the first run's before the plan was read-only).
func TestPlanRunsStartAfresh(t *testing.T) {
	csv := writeFile(t, "rows.csv", "city\nZürich\nLyon\nBerlin\nOslo\n")
	p := &profile.Profile{
		Name: "test", URL: "http://fake/mcp", Duration: profile.Duration(time.Minute), VUs: 1, Iterations: 3,
		Protocol: "2025-11-25",
		Ops: []profile.OpSpec{{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"n": "{{seq}}", "city": "{{.city}}"},
			Data: &argtmpl.DataSpec{File: csv}}},
	}
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			var params struct {
				Arguments struct {
					N    int    `json:"n"`
					City string `json:"city"`
				} `json:"arguments"`
			}
			if err := json.Unmarshal(r.Params, &params); err != nil {
				t.Error(err)
			}
			mu.Lock()
			got = append(got, fmt.Sprintf("%d %s", params.Arguments.N, params.Arguments.City))
			mu.Unlock()
			w.Result(r, map[string]any{"content": []any{}})
		})
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		pl, err := Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"1 Zürich", "2 Lyon", "3 Berlin"}
		for i := range 2 {
			got = nil
			if _, err := Run(t.Context(), pl, Options{}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if !slices.Equal(got, want) {
				t.Errorf("run %d sent %q, want %q", i+1, got, want)
			}
			mu.Unlock()
		}
	})
}
