package workload

import (
	"context"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
)

// Session set-up and teardown; the recorder keeps their tallies.

// initSession initializes VU vu's session s and records the outcome. Set-up requests are
// marked for the chaos layer: faults leave them alone unless they name
// target=init. A set-up cut short by the end of the run is not recorded.
func (e *engine) initSession(ctx context.Context, s *driver.Session, vu int) bool {
	var res driver.Result
	err := s.Initialize(chaos.WithPhase(ctx, chaos.PhaseSetup), &res)
	if err != nil && ctx.Err() != nil {
		return false
	}
	e.rec.RecordInit(&res, err, s.BadSessionID())
	if err != nil {
		return false
	}
	e.mu.Lock()
	if e.negotiated == "" {
		e.negotiated = s.Protocol()
	}
	e.mu.Unlock()
	e.sessionsOpen.Add(1)
	if n := len(e.cfgs); n > 0 {
		e.rec.EndpointSession(vu % n)
	}
	if sc := e.pl.outputSchemas(); sc != nil { // output_schema checks: the tools' schemas, once a session
		sc.Fetch(chaos.WithPhase(ctx, chaos.PhaseSetup), s, vu) // a failure fails those checks, saying why
	}
	return true
}

// onGETResume counts a GET stream's reconnect attempt — a resume with
// Last-Event-ID or a re-open without — on the timeline, so storms show on
// servers whose GET streams carry no event ids too.
func (e *engine) onGETResume(r driver.Resume) {
	e.tl.Record(&r)
}

func (e *engine) openGET(s *driver.Session) {
	s.OnGETResume = e.onGETResume
	err := s.OpenStream(chaos.WithPhase(e.runCtx, chaos.PhaseStream))
	e.rec.RecordGETOpen(err)
	if err == nil {
		e.streamsOpen.Add(1)
	}
}

func (e *engine) closeSession(s *driver.Session) {
	// DELETE gets its own short deadline: it must go out even after Ctrl-C.
	ctx, cancel := context.WithTimeout(chaos.WithPhase(context.WithoutCancel(e.runCtxOr()), chaos.PhaseSetup), 5*time.Second)
	if now := e.opts.StopNow; now != nil { // a stop at once cuts it (Options.StopNow)
		defer context.AfterFunc(now, cancel)()
	}
	err := s.Close(ctx)
	cancel()
	if err != nil && e.opts.StopNow != nil && e.opts.StopNow.Err() != nil {
		e.closesCut.Add(1)
	}
	e.sessionsOpen.Add(-1)
	st := s.StreamStats() // final: the stream stopped and was judged
	if st.Opened > 0 {
		e.streamsOpen.Add(-1)
	}
	e.rec.RecordClose(err, s.Redirects(), s.Hygiene(), st)
}

// runCtxOr is the run's context, or a background one before the clock
// started (a set-up interrupted).
func (e *engine) runCtxOr() context.Context {
	if e.runCtx != nil {
		return e.runCtx
	}
	return context.Background()
}
