package workload

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/verdict"
)

// Plan is a compiled, validated profile: driver config and ops ready to
// send, and every setting of the run as a typed field (durations as
// time.Duration, defaults applied, the schedule built). The engine reads
// these fields only, never Profile (TestEngineReadsNoProfile): as k6 does
// with each executor's config, the profile is validated once and turned
// into what the run needs before it starts. Read-only once built: Run
// settles the protocol and switches off what cannot apply at it on its
// own copy (see Run for what the ops share between runs). Driver holds the real URL and the expanded header
// values: never show it. Profile is the profile as written (defaults
// applied, ${NAME} references unexpanded, URL shown as Target), for
// display and run.json; Target is the URL for display (ShowURL): both are
// safe to show.
type Plan struct {
	Profile    profile.Profile
	Driver     driver.Config
	Target     string
	Ops        []*driver.Op
	Names      []string
	Thresholds []verdict.Threshold
	// Aborts are the thresholds that stop the run once crossed (abort.go);
	// each is among Thresholds too (judged at the end as well).
	Aborts []verdict.AbortRule
	// EndpointsShown are the endpoints for display, url first, when the
	// profile gives urls (nil with one endpoint).
	EndpointsShown []string
	endpoints      []*profile.Endpoint
	// Scenarios replace the op mix when the profile gives them: each
	// iteration runs one, chosen by weight; their steps' ops are Ops.
	Scenarios []Scenario
	cum       []int         // cumulative weights, for the op mix
	scum      []int         // cumulative weights of the scenarios
	args      []*argtmpl.Op // the templated ops' renderers
	corr      *correlator   // values steps read from earlier steps (nil: none; correlate.go)
	dynNames  []string      // ops whose tool, prompt or uri is a template (not under 2026-07-28)

	// checks are the ops' checks (checks.go).
	checks planChecks

	// Name is the profile's name (the summary's and run.json's).
	Name string

	// The load model (load.go). Open is the open model (an arrival rate;
	// else the closed model: VUs running back to back).
	Open bool
	// VUs: closed model, the VUs (before stages ramp them); open model,
	// the VUs started before the clock. MaxVUs caps the open model's VUs;
	// PeakVUs is the most VUs active at once in the closed model (the
	// stages' peak; VUs without stages, and in the open model). All ≥ 1
	// but PeakVUs (0 when every stage targets 0).
	VUs, MaxVUs, PeakVUs int
	// Concurrency is the requests a session has in flight at once (≥ 1).
	Concurrency int
	// Iterations is the number of iterations the VUs share, then stop (0:
	// none; closed model; iterations.go).
	Iterations int
	// Rate is the open model's arrival rate in ops/s (with stages, the
	// rate they start from).
	Rate float64
	// Staged is true when stages ramp the load; StagesText describes them
	// ("0 → 500/s over 10s"; "" without stages).
	Staged     bool
	StagesText string
	// Schedule is built from the load model: the open model's arrivals
	// (Constant, or the stages' Ramp after a flat warm-up), the closed
	// model's active VUs with stages (a Ramp), nil otherwise (every VU
	// active). Its time 0 is the start of the warm-up.
	Schedule Schedule

	// Warmup runs before the measured Window (the stages' total, or the
	// duration); GracefulStop lets in-flight ops finish after it;
	// ThinkTime pauses a closed-model VU between ops; an open-model op
	// that cannot start within MaxDelay of its intended start is dropped.
	Warmup, Window, GracefulStop, ThinkTime, MaxDelay time.Duration

	// GETStream opens a standalone GET stream per session.
	GETStream bool
	// Seed makes op choice, jitter and the VUs' random streams
	// reproducible.
	Seed int64
	// ChurnRate is the sessions replaced per second (0: no churn).
	ChurnRate float64
	// CheckDeleted probes every deleted session for its 404.
	CheckDeleted bool
	// Chaos is the fault plan, defaults applied (nil: no faults).
	Chaos *chaos.Plan
}

// Compile validates profile p and builds the plan. It is pure: it works
// on a copy of p with Defaults applied (Defaults is idempotent, so p may
// come defaulted or not) and never writes p; callers that show or keep
// the defaulted profile call p.Defaults themselves. Every problem of the
// profile is returned at once, as a *ProfileError. It reads the data
// files the profile names and the environment (${NAME}); it opens no
// connection and builds no HTTP client.
//
// hc is the HTTP client the plan's sessions share (Plan.Driver.HTTPClient);
// Compile never builds one. The zero value, nil, leaves
// Plan.Driver.HTTPClient nil: Run then builds one per run with
// driver.NewHTTPClient from Plan.Driver's network settings (HTTP version,
// proxy, TLS, source addresses, timeouts), as Compile did before; a plan
// that is only shown (a dry run) needs none. A client passed in must be
// configured for those settings by the caller (driver.NewHTTPClient of
// the plan's Driver is one).
func Compile(p *profile.Profile, hc *http.Client) (*Plan, error) {
	p = p.Clone()
	p.Defaults()
	r, errs := p.Resolve(os.LookupEnv)
	if len(errs) > 0 {
		return nil, &profile.ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	ep, ops, args := r.Endpoint, r.Ops, r.Args
	pl := &Plan{Profile: *p, Target: ep.Shown}
	pl.Profile.URL = ep.Shown
	pl.compileEndpoints(ep, r.More)
	pl.Profile.URLs = pl.EndpointsShown[min(1, len(pl.EndpointsShown)):]
	pl.compileLoad(p)
	pl.Iterations = p.Iterations
	for _, t := range p.Thresholds {
		th, _ := verdict.ParseThreshold(t) // resolve checked it
		pl.Thresholds = append(pl.Thresholds, th)
	}
	pl.Driver = driverConfig(p, ep, &r.Net, hc)
	if p.HasScenarios() {
		if err := pl.compileScenarios(p, ops, args); err != nil {
			return nil, err
		}
		if err := pl.checkThresholds(p); err != nil {
			return nil, err
		}
		return pl, nil
	}
	total := 0
	for i := range ops {
		o := &ops[i] // expanded; the name comes from the op as written
		if *o.Weight == 0 {
			continue
		}
		op, err := pl.buildOp(o, p.Ops[i].OpName(), args[i])
		if err != nil {
			return nil, fmt.Errorf("ops[%d].arguments: %w", i, err)
		}
		total += *o.Weight
		pl.Ops = append(pl.Ops, op)
		pl.Names = append(pl.Names, op.Name)
		pl.cum = append(pl.cum, total)
	}
	if err := pl.checkThresholds(p); err != nil {
		return nil, err
	}
	return pl, nil
}

// pick chooses an op index by weight.
func (pl *Plan) pick(rng *rand.Rand) int {
	return searchCum(pl.cum, rng.IntN(pl.cum[len(pl.cum)-1]))
}

// opFor chooses the op of arrival slot h (open model): a hash of the seed
// and h, so the mix is the same whichever VU runs the slot.
func (pl *Plan) opFor(h uint64) int {
	return searchCum(pl.cum, int(mix(h, pl.Seed)%uint64(pl.cum[len(pl.cum)-1])))
}

// mix hashes arrival slot h with the seed (splitmix64).
func mix(h uint64, seed int64) uint64 {
	x := h + uint64(seed)*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// jobFor is the job of arrival slot h (open model): an op of the mix, or
// an iteration of a scenario (its first step's op stands for it when it
// is dropped).
func (pl *Plan) jobFor(h uint64) job {
	if len(pl.Scenarios) > 0 {
		sc := pl.scenarioFor(h)
		return job{op: pl.Scenarios[sc].Steps[0].Op, scen: sc + 1}
	}
	return job{op: pl.opFor(h)}
}

// pickJob draws a closed-model VU's next job.
func (pl *Plan) pickJob(rng *rand.Rand) job {
	if len(pl.Scenarios) > 0 {
		sc := searchCum(pl.scum, rng.IntN(pl.scum[len(pl.scum)-1]))
		return job{op: pl.Scenarios[sc].Steps[0].Op, scen: sc + 1}
	}
	return job{op: pl.pick(rng)}
}

// weight returns op i's weight in the mix.
func (pl *Plan) weight(i int) int {
	if i == 0 {
		return pl.cum[0]
	}
	return pl.cum[i] - pl.cum[i-1]
}

// disable takes op i out of the mix (its row stays, with no ops).
func (pl *Plan) disable(i int) {
	w := pl.weight(i)
	for j := i; j < len(pl.cum); j++ {
		pl.cum[j] -= w
	}
}

// searchCum maps a draw n in [0, total) to the op whose cumulative weight
// range holds it (ops of weight 0 are never chosen).
func searchCum(cum []int, n int) int { return sort.SearchInts(cum, n+1) }

// driverConfig is the driver's configuration of a profile: its endpoint
// (the real URL and headers), timeouts, resumption, limits, the network
// settings resolved (net: netConfig's), and one large-message budget for
// the run.
func driverConfig(p *profile.Profile, ep *profile.Endpoint, net *driver.Config, hc *http.Client) driver.Config {
	var c driver.Config
	d := &c
	d.URL = ep.URL
	d.Protocol = p.Protocol
	d.SettleBeside = true // a lane is free at its response (vuState.record settles)
	d.ConnectTimeout = p.Timeouts.Connect.D()
	d.RequestTimeout = p.Timeouts.Request.D()
	d.StreamIdleTimeout = p.Timeouts.StreamIdle.D()
	d.Reconnect = p.Resume.Policy
	d.DefaultRetry = p.Resume.DefaultRetry.D()
	d.MaxResumes = p.Resume.MaxAttempts
	d.ReissueUnresumable = p.Resume.Reissue
	d.MaxReissues = p.Resume.MaxReissues
	d.CheckDeleted = p.CheckDeleted
	d.Seed = p.Seed
	d.MaxMessageBytes = int64(p.MaxMessageBytes)
	d.MaxEventBytes = int(p.MaxEventBytes)
	d.FollowRedirects = p.FollowRedirects
	d.SourceAddrs, _ = httpclient.ParseSourceAddrs(p.SourceAddrs) // resolve checked it; "" gives nil
	// One large-message budget for the run: its peak memory is about VUs ×
	// the small per-session buffers + this.
	d.Budget = driver.NewBudget(max(int64(p.MaxBufferedBytes), d.BudgetNeed()))
	d.Header = ep.Header
	d.HTTP, d.Proxy, d.TLS, d.Insecure, d.OAuth = net.HTTP, net.Proxy, net.TLS, net.Insecure, net.OAuth
	d.HTTPClient = hc // nil: Run builds one (runCopy)
	return c
}
