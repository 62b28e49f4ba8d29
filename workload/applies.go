package workload

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// What the run was asked for against what it can do: a requested feature
// that cannot apply is named before the load starts (run.json, the
// progress sink's first lines) and in the summary, never left to show as
// zeros ("0 cuts", "0 reconnect attempts") or a wall of errors.
//
// Three moments decide: the protocol (decideProtocol: 2026-07-28 has no
// sessions and no resumption), the first session's answers before the
// clock starts (preflight: no session id, JSON answers, GET 405), and the
// run's own figures (endApplies: what only the load showed).

// Feature names, by the flag or profile field that asks for them.
const (
	featChurn        = "session churn (--churn-rate)"
	featCheckDeleted = "--check-deleted"
	featResume       = "resuming cut response streams (--chaos cut on POST)"
	featStreamFaults = "chaos cuts and stalls of response streams (--chaos cut/stall target=post)"
	featGETStream    = "--get-stream"
	featGETStorm     = "the storm on GET streams (chaos storm target=get)"
	featServer       = "the profile's server: block"
)

// ServerNotApplicable is the entry that names the profile's server:
// block not applicable when the target is not the embedded reference
// server (--url: an external server, which mcpbench cannot configure):
// the block sets the embedded server's mode, GET-stream retry hint, tick
// notifications and page size, nothing else. ok is false when the block
// sets nothing. The feature names the fields set, e.g. "the profile's
// server: block (get_retry 500ms, tick 1s)".
func ServerNotApplicable(s profile.ServerSpec) (n results.NotApplicable, ok bool) {
	var set []string
	if s.Mode != "" {
		set = append(set, "mode "+s.Mode)
	}
	if s.GETRetry > 0 {
		set = append(set, "get_retry "+s.GETRetry.D().String())
	}
	if s.Tick > 0 {
		set = append(set, "tick "+s.Tick.D().String())
	}
	if s.PageSize > 0 {
		set = append(set, "page_size "+strconv.Itoa(s.PageSize))
	}
	if len(set) == 0 {
		return n, false
	}
	why := "the target is an external server (--url), and server: configures only the embedded reference server (started without --url): mcpbench cannot set it on your server; configure the server itself"
	if s.Tick > 0 {
		why += " (without its tick notifications the GET streams carry no event to judge)"
	}
	return results.NotApplicable{Feature: featServer + " (" + strings.Join(set, ", ") + ")", Reason: why}, true
}

// notApply records a feature that cannot apply (once per feature).
func (e *engine) notApply(feature, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.ContainsFunc(e.notApp, func(n results.NotApplicable) bool { return n.Feature == feature }) {
		e.notApp = append(e.notApp, results.NotApplicable{Feature: feature, Reason: reason})
	}
}

// notApplicable returns a copy of the features found not to apply so far.
func (e *engine) notApplicable() []results.NotApplicable {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.notApp)
}

// streamFaults reports whether plan p cuts or stalls response streams of
// POSTs (faults and storms act on SSE streams only).
func streamFaults(p *chaos.Plan) (cuts, any bool) {
	if p == nil {
		return false, false
	}
	for _, f := range p.Faults {
		if f.Action != chaos.ActionCut && f.Action != chaos.ActionStall {
			continue
		}
		if t := f.Target; t == "" || t == chaos.TargetPOST || t == chaos.TargetBoth {
			any = true
			cuts = cuts || f.Action == chaos.ActionCut
		}
	}
	return cuts, any
}

// resumeFeatures names the features of plan p that need stream
// resumption (the session-based versions; 2026-07-28 re-issues a broken
// request).
func resumeFeatures(p *Plan) []string {
	if cuts, _ := streamFaults(p.Chaos); cuts {
		return []string{"resuming cut response streams"}
	}
	return nil
}

// getStorm reports whether the plan's storm cuts GET streams only.
func getStorm(p *Plan) bool {
	return p.Chaos != nil && p.Chaos.Storm != nil && p.Chaos.Storm.Target == chaos.TargetGET
}

// preflight looks at the first set-up session before the clock starts:
// a server that gave no session id has nothing to DELETE and may offer
// no GET stream (asked once, only then: a stateful server may answer a
// second GET of the same session 409); one that answers a ping with JSON
// has no event stream to cut. Bounded by the request timeout.
func (e *engine) preflight(ctx context.Context, sessions []*driver.Session) {
	p := e.pl
	i := slices.IndexFunc(sessions, func(s *driver.Session) bool { return s != nil })
	if i < 0 || ctx.Err() != nil {
		return
	}
	s := sessions[i]
	ctx = chaos.WithPhase(ctx, chaos.PhaseSetup) // the faults leave it alone
	stateless := !s.Modern() && s.ID() == ""
	if stateless && p.CheckDeleted {
		e.notApply(featCheckDeleted, "the server gave no Mcp-Session-Id at initialize (stateless): there is no session to DELETE and probe")
	}
	if stateless && (p.GETStream || getStorm(p)) {
		if st, err := s.ProbeGET(ctx); err == nil && st == http.StatusMethodNotAllowed {
			e.getOffered(p, "the server answers GET with 405 (it offers no standalone stream)")
		}
	}
	if _, any := streamFaults(p.Chaos); any {
		var res driver.Result
		ping := &driver.Op{Name: "ping", Method: "ping"}
		res.Intended = time.Now()
		if s.Do(ctx, ping, &res); res.Err == nil && res.Events == 0 {
			e.notApply(featStreamFaults, "the server answers POSTs with application/json, not an SSE stream: there is no event to cut or stall")
		}
	}
}

// getOffered records that the server offers no GET stream: the GET
// stream and a storm on GET streams cannot apply.
func (e *engine) getOffered(p *Plan, reason string) {
	if p.GETStream {
		e.notApply(featGETStream, reason)
	}
	if getStorm(p) {
		e.notApply(featGETStorm, reason+": there is no stream to cut, so no reconnect wave")
	}
}

// endApplies adds what only the run showed: no GET stream opened, every
// open answered 405; POST cuts or stalls asked for while no answer was an
// SSE stream; cuts whose streams carried no event id, so none could be
// resumed. It sets s.NotApplicable.
func (e *engine) endApplies(s *results.Summary) {
	p := e.pl
	if g := s.GETStreams; g != nil && g.Opened == 0 && g.None > 0 && g.Failed == 0 {
		e.getOffered(p, "the server answered every GET with 405 (it offers no standalone stream)")
	}
	if _, any := streamFaults(p.Chaos); any && s.All.Count > 0 && (s.All.Ledger == nil || s.All.Ledger.Streams == 0) {
		e.notApply(featStreamFaults, "no POST was answered with an SSE stream (application/json answers): there was no event to cut or stall")
	}
	if cuts, _ := streamFaults(p.Chaos); cuts && !driver.IsModern(s.Protocol) {
		if l := s.All.Ledger; l != nil && l.Verdicts[driver.VerdictUnresumable.String()] > 0 && (s.All.Resumes == nil || s.All.Resumes.Attempts == 0) {
			e.notApply(featResume, "the server's response streams carry no event id: a cut stream has nothing to resume from (each one unresumable)")
		}
	}
	s.NotApplicable = e.notApplicable()
}
