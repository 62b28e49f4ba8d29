package workload

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/verdict"
)

// Plan is a compiled, validated profile: driver config and ops ready to
// send. Immutable once built. Driver holds the real URL and the expanded
// header values: never show it. Profile is the profile as written
// (defaults applied, ${NAME} references unexpanded, URL shown as Target)
// and Target is the URL for display (ShowURL): both are safe to show.
type Plan struct {
	Profile    Profile
	Driver     driver.Config
	Target     string
	Ops        []*driver.Op
	Names      []string
	Thresholds []verdict.Threshold
	// EndpointsShown are the endpoints for display, url first, when the
	// profile gives urls (nil with one endpoint).
	EndpointsShown []string
	endpoints      []*Endpoint
	// Scenarios replace the op mix when the profile gives them: each
	// iteration runs one, chosen by weight; their steps' ops are Ops.
	Scenarios []Scenario
	cum       []int    // cumulative weights, for the op mix
	scum      []int    // cumulative weights of the scenarios
	args      []*argOp // the templated ops' renderers
}

// Compile validates p (after Defaults) and builds the plan; hc is the HTTP
// client the sessions share (nil: driver.NewHTTPClient). Every problem of
// the profile is returned at once, as a *ProfileError.
func Compile(p *Profile, hc *http.Client) (*Plan, error) {
	p.Defaults()
	if errs := p.Validate(); len(errs) > 0 {
		return nil, &ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	ep, _ := p.endpoint(os.LookupEnv) // Validate reported its problems
	ops, _ := p.expandOps(os.LookupEnv)
	args, errs := p.compileArgs(ops) // Validate checked them: a data file changed since
	if len(errs) > 0 {
		return nil, &ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	pl := &Plan{Profile: *p, Target: ep.Shown}
	pl.Profile.URL = ep.Shown
	pl.compileEndpoints(p, ep, os.LookupEnv)
	pl.Profile.URLs = pl.EndpointsShown[min(1, len(pl.EndpointsShown)):]
	for _, t := range p.Thresholds {
		th, _ := verdict.ParseThreshold(t) // Validate checked it
		pl.Thresholds = append(pl.Thresholds, th)
	}
	pl.Driver = driverConfig(p, ep, hc)
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
		op, err := pl.buildOp(o, p.Ops[i].opName(), args[i])
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
	return searchCum(pl.cum, int(mix(h, pl.Profile.Seed)%uint64(pl.cum[len(pl.cum)-1])))
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
// (the real URL and headers), timeouts, resumption, limits, and one
// large-message budget for the run.
func driverConfig(p *Profile, ep *Endpoint, hc *http.Client) driver.Config {
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
	d.SourceAddrs, _ = httpclient.ParseSourceAddrs(p.SourceAddrs) // Validate checked it; "" gives nil
	// One large-message budget for the run: its peak memory is about VUs ×
	// the small per-session buffers + this.
	d.Budget = driver.NewBudget(max(int64(p.MaxBufferedBytes), d.BudgetNeed()))
	d.Header = ep.Header
	p.netConfig(os.LookupEnv, d) // Validate reported its problems
	d.HTTPClient = hc
	if d.HTTPClient == nil && d.URL != "" {
		d.HTTPClient = driver.NewHTTPClient(d)
	}
	return c
}
