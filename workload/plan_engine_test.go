package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	gocmpopts "github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/profile"
)

// compileFiles turn a profile into a plan (the schema, its validation,
// the compile); they may read Profile. Every other file of the package is
// the engine's, which reads the Plan only.
var compileFiles = []string{
	"plan.go", "compile_aborts.go", "compile_endpoints.go", "compile_header.go", "compile_load.go", "compile_scenarios.go",
	"compile_thresholds.go", "checks.go", "correlate.go", "procs.go",
}

// engineTypes are the engine's types: their methods read the Plan only,
// in whichever file they are.
var engineTypes = []string{"engine", "vuState", "laneGroup"}

// The engine reads the compiled plan, never the profile: no engine file,
// and no method of the engine's types in any file, names Profile (a
// selector such as pl.Profile, a *Profile parameter, a Profile method's
// call through one), except as the key of a composite literal
// (results.Summary{Profile: pl.Name}). Validation, defaults and the
// schedule are the compile's (Compile), done once before the run.
func TestEngineReadsNoProfile(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(compileFiles, name) {
			checked++
			for _, pos := range profileRefs(f) {
				t.Errorf("%s: the engine names Profile: read a field of Plan (set by Compile) instead", fset.Position(pos))
			}
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !slices.Contains(engineTypes, recvType(fn)) {
				continue
			}
			checked++
			for _, pos := range profileRefs(fn) {
				t.Errorf("%s: %s.%s names Profile: read a field of Plan (set by Compile) instead", fset.Position(pos), recvType(fn), fn.Name.Name)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d engine files and methods: the file list is stale", checked)
	}
}

// The check sees what it must: a selector, a parameter type, a method
// call through the plan; and leaves composite literal keys alone.
func TestProfileRefsFinds(t *testing.T) {
	for src, want := range map[string]int{
		`package x; func f(e *engine) { _ = e.pl.Profile.Seed }`:              1,
		`package x; func f(p *Profile) {}`:                                    1,
		`package x; func f(e *engine) { _ = e.pl.Profile.Open() }`:            1,
		`package x; func f(e *engine) { _ = Summary{Profile: e.pl.Name} }`:    0,
		`package x; func f(e *engine) { _ = Summary{Profile: e.pl.Profile} }`: 1,
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(profileRefs(f)); got != want {
			t.Errorf("%s: %d references, want %d", src, got, want)
		}
	}
}

// profileRefs returns where n names Profile, composite literal keys
// aside.
func profileRefs(n ast.Node) []token.Pos {
	var out []token.Pos
	var visit func(ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if _, ok := n.Key.(*ast.Ident); !ok {
				ast.Inspect(n.Key, visit)
			}
			ast.Inspect(n.Value, visit)
			return false
		case *ast.Ident:
			if n.Name == "Profile" {
				out = append(out, n.Pos())
			}
		}
		return true
	}
	ast.Inspect(n, visit)
	return out
}

// recvType is the name of fn's receiver type, without the pointer.
func recvType(fn *ast.FuncDecl) string {
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// Compile turns the load model into the plan's typed settings and builds
// the schedule once: durations as time.Duration, defaults applied, the
// stages' ramp after a flat warm-up (open: arrivals; closed: active VUs),
// a constant rate without stages, none for the plain closed model.
func TestCompileLoad(t *testing.T) {
	ops := []profile.OpSpec{{Method: "ping"}}
	for _, tt := range []struct {
		name string
		p    profile.Profile
		want Plan
	}{
		{"closed", profile.Profile{Duration: profile.Duration(3 * time.Second), ThinkTime: profile.Duration(5 * time.Millisecond), Churn: profile.Churn{Rate: 2}},
			Plan{Name: "closed", VUs: 10, MaxVUs: 10, PeakVUs: 10, Concurrency: 1, Window: 3 * time.Second, GracefulStop: 5 * time.Second,
				ThinkTime: 5 * time.Millisecond, MaxDelay: time.Second, Seed: 1, ChurnRate: 2}},
		{"open", profile.Profile{Rate: 50, Warmup: profile.Duration(time.Second), MaxDelay: profile.Duration(200 * time.Millisecond), Seed: 7, GETStream: true},
			Plan{Name: "open", Open: true, VUs: 10, MaxVUs: 10, PeakVUs: 10, Concurrency: 1, Rate: 50, Warmup: time.Second, Window: 10 * time.Second,
				GracefulStop: 5 * time.Second, MaxDelay: 200 * time.Millisecond, Seed: 7, GETStream: true,
				Schedule: Constant{PerSec: 50, Duration: 11 * time.Second}}},
		{"open stages", profile.Profile{Model: "open", Warmup: profile.Duration(time.Second), Stages: []profile.StageSpec{{Duration: profile.Duration(2 * time.Second), Target: 100}, {Duration: profile.Duration(time.Second), Target: 40}}},
			Plan{Name: "open stages", Open: true, VUs: 10, MaxVUs: 100, PeakVUs: 10, Concurrency: 1, Warmup: time.Second, Window: 3 * time.Second,
				GracefulStop: 5 * time.Second, MaxDelay: time.Second, Seed: 1, Staged: true, StagesText: "0 → 100/s over 2s → 40/s over 1s",
				Schedule: Ramp{Start: 0, Stages: []Stage{{Duration: time.Second, Target: 0}, {Duration: 2 * time.Second, Target: 100}, {Duration: time.Second, Target: 40}}}}},
		{"closed stages", profile.Profile{VUs: 2, Concurrency: 3, Stages: []profile.StageSpec{{Duration: profile.Duration(2 * time.Second), Target: 6}}},
			Plan{Name: "closed stages", VUs: 2, MaxVUs: 6, PeakVUs: 6, Concurrency: 3, Window: 2 * time.Second, GracefulStop: 5 * time.Second,
				MaxDelay: time.Second, Seed: 1, Staged: true, StagesText: "2 → 6 VUs over 2s",
				Schedule: Ramp{Start: 2, Stages: []Stage{{Duration: 0, Target: 2}, {Duration: 2 * time.Second, Target: 6}}}}},
	} {
		p := tt.p
		p.Name, p.URL, p.Ops = tt.name, "http://127.0.0.1:1/mcp", ops
		pl, err := Compile(&p, &http.Client{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := gocmp.Diff(tt.want, *pl, gocmpopts.IgnoreUnexported(Plan{}),
			gocmpopts.IgnoreFields(Plan{}, "Profile", "Driver", "Target", "Ops", "Names", "Thresholds", "EndpointsShown", "Scenarios")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// The fault plan is the plan's with its defaults, applied once by
// Defaults (Validate changes nothing); an empty one injects nothing.
func TestCompileChaos(t *testing.T) {
	cut, err := chaos.ParseFault("cut between=100ms-500ms")
	if err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{URL: "http://127.0.0.1:1/mcp", Ops: []profile.OpSpec{{Method: "ping"}}, Chaos: &chaos.Plan{Faults: []chaos.Fault{cut}}}
	pl, err := Compile(p, &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Chaos == nil || pl.Chaos.Faults[0].Close != chaos.CloseRST || pl.Chaos.Faults[0].Target != chaos.TargetPOST {
		t.Fatalf("chaos %+v: want the cut with its defaults (close rst, target post)", pl.Chaos)
	}
	q := &profile.Profile{URL: "http://127.0.0.1:1/mcp", Ops: []profile.OpSpec{{Method: "ping"}}, Chaos: &chaos.Plan{}}
	if pl, err := Compile(q, &http.Client{}); err != nil || pl.Chaos != nil {
		t.Fatalf("empty chaos: %v %+v, want no fault plan", err, pl.Chaos)
	}
	r := &profile.Profile{Ops: []profile.OpSpec{{Method: "ping"}}, Chaos: &chaos.Plan{Faults: []chaos.Fault{{Action: chaos.ActionCut, When: cut.When}}}}
	r.Validate()
	if r.Chaos.Faults[0].Close != "" {
		t.Fatal("Validate applied the chaos defaults: Defaults does, once")
	}
}
