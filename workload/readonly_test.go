package workload

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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
// plan is read-only under Run. Against a server that speaks only
// 2026-07-28, auto settles that version, switches churn and the
// deleted-session check off, takes logging/setLevel out of the mix and
// carries its level into _meta: all of it on the run's copy. The plan is
// run twice in turn and twice at once (-race), and reads the same after.
func TestPlanReadOnlyUnderRun(t *testing.T) {
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
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(run)
		}
		wg.Wait()
		if after := stateOf(pl); !after.equal(before) {
			t.Fatalf("concurrent runs wrote the plan: before %+v, after %+v", before, after)
		}
	})
}
