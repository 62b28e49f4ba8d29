package workload

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
)

// Session set-up and teardown, and the tallies of what sessions and their
// GET streams did.

// getAgg aggregates GET-stream stats of closed sessions.
type getAgg struct {
	opened, none, failed, events, requests, breaks, reopens int64
	causes                                                  map[string]int64
	resumes, reopenTries                                    metrics.OpStats
	verdicts                                                [driver.NumVerdicts]int64
	streams, faulty                                         int64
	failEx                                                  string
	used                                                    bool
}

// hygAgg aggregates the deleted-session checks.
type hygAgg struct {
	probed, faulty int64
	verdicts       map[string]int64
	statuses       map[string]int64
}

// initSession initializes s and records the outcome. Set-up requests are
// marked for the chaos layer: faults leave them alone unless they name
// target=init.
func (e *engine) initSession(ctx context.Context, s *driver.Session) bool {
	var res driver.Result
	err := s.Initialize(chaos.WithPhase(ctx, chaos.PhaseSetup), &res)
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.BadSessionID() {
		e.sess.BadSessionIDs++
	}
	if err != nil {
		if res.Class != driver.ClassCanceled && ctx.Err() == nil {
			e.sess.Failed++
			e.failCls[res.Class]++
			if e.failEx[res.Class] == "" {
				e.failEx[res.Class] = err.Error()
			}
		}
		return false
	}
	e.sess.Opened++
	if e.negotiated == "" {
		e.negotiated = s.Protocol()
	}
	e.initHist.RecordValue(max(1, res.ServiceTime().Microseconds()))
	e.sessionsOpen.Add(1)
	return true
}

// onGETResume counts a GET stream's reconnect attempt — a resume with
// Last-Event-ID or a re-open without — on the timeline, so storms show on
// servers whose GET streams carry no event ids too.
func (e *engine) onGETResume(r driver.Resume) {
	e.tl.Add(r.At, metrics.Early(&r))
}

func (e *engine) openGET(s *driver.Session) {
	s.OnGETResume = e.onGETResume
	err := s.OpenStream(chaos.WithPhase(e.runCtx, chaos.PhaseStream))
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get.used = true
	switch {
	case err == nil:
		e.streamsOpen.Add(1)
	case errors.Is(err, driver.ErrNoGETStream):
		e.get.none++
	default:
		e.get.failed++
		if e.get.failEx == "" {
			e.get.failEx = err.Error()
		}
	}
}

func (e *engine) closeSession(s *driver.Session) {
	// DELETE gets its own short deadline: it must go out even after Ctrl-C.
	ctx, cancel := context.WithTimeout(chaos.WithPhase(context.WithoutCancel(e.runCtxOr()), chaos.PhaseSetup), 5*time.Second)
	err := s.Close(ctx)
	cancel()
	st := s.StreamStats() // final: the stream stopped and was judged
	e.sessionsOpen.Add(-1)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.sess.CloseFails++
	} else {
		e.sess.Closed++
	}
	e.sess.Redirects += s.Redirects()
	if h := s.Hygiene(); h.Checked {
		e.hygiene(h)
	}
	if st.Opened > 0 {
		e.streamsOpen.Add(-1)
		e.getStream(&st)
	}
}

// runCtxOr is the run's context, or a background one before the clock
// started (a set-up interrupted).
func (e *engine) runCtxOr() context.Context {
	if e.runCtx != nil {
		return e.runCtx
	}
	return context.Background()
}

// hygiene tallies one session's deleted-session check (e.mu held).
func (e *engine) hygiene(h driver.Hygiene) {
	a := &e.hyg
	a.probed++
	if !h.Faulty() {
		return
	}
	a.faulty++
	if a.verdicts == nil {
		a.verdicts, a.statuses = map[string]int64{}, map[string]int64{}
	}
	a.verdicts[h.Verdict.String()]++
	a.statuses[strconv.Itoa(h.Status)]++
	e.rec.AddOffender(metrics.Offender{Op: "deleted-session check", Class: h.Verdict.String(), Status: h.Status,
		Verdicts: map[string]int{h.Verdict.String(): 1},
		Error:    "ping on deleted session " + strconv.Quote(h.SessionID) + " answered HTTP " + strconv.Itoa(h.Status) + " (want 404)"})
}

// getStream tallies one session's GET stream (e.mu held).
func (e *engine) getStream(st *driver.StreamStats) {
	g := &e.get
	g.opened += st.Opened
	g.events += st.Events
	g.requests += st.Requests
	g.breaks += st.Breaks
	g.reopens += st.Reopens
	for c, n := range st.BreakCauses {
		if g.causes == nil {
			g.causes = map[string]int64{}
		}
		g.causes[c] += n
	}
	if st.ErrorExample != "" && g.failEx == "" {
		g.failEx = st.ErrorExample
	}
	for _, r := range st.Resumes {
		a := &g.resumes
		if r.Reopen {
			a = &g.reopenTries
		}
		a.Resumes++
		if r.OK {
			a.ResumesOK++
		}
		if metrics.Early(&r) {
			a.EarlyResume++
		}
		if a.Resume == nil {
			a.Resume, a.Wait = metrics.NewHistogram(), metrics.NewHistogram()
		}
		a.Resume.RecordValue(max(1, r.TimeToResume.Microseconds()))
		a.Wait.RecordValue(max(1, r.Delay.Microseconds()))
	}
	if st.Ledger.Checked {
		g.streams++
		for i, c := range st.Ledger.Counts {
			g.verdicts[i] += int64(c)
		}
		if st.Ledger.Faulty() {
			g.faulty++
			e.rec.AddOffender(metrics.Offender{Op: "GET stream", Start: st.Since, Class: st.LastError, Verdicts: driver.VerdictMap(st.Ledger.Counts),
				EventIDs: st.Ledger.EventIDs(), Resumes: len(st.Resumes), Evidence: st.Ledger.Evidence})
		}
	}
}

// getSummary builds the GET-stream summary (e.mu held).
func (e *engine) getSummary() *metrics.GETStreamSummary {
	g := &e.get
	if !g.used {
		return nil
	}
	gs := &metrics.GETStreamSummary{Opened: g.opened, None: g.none, Failed: g.failed, Events: g.events, Requests: g.requests,
		Breaks: g.breaks, BreakCauses: g.causes, Reopens: g.reopens, FailExample: g.failEx}
	gs.Resumes = resumeSummary(&g.resumes)
	gs.ReopenAttempts = resumeSummary(&g.reopenTries)
	if g.streams > 0 {
		gs.Ledger = metrics.LedgerOf(g.streams, g.faulty, g.verdicts)
	}
	return gs
}

func resumeSummary(a *metrics.OpStats) *metrics.ResumeSummary {
	if a.Resumes == 0 {
		return nil
	}
	return &metrics.ResumeSummary{Attempts: a.Resumes, Accepted: a.ResumesOK, Early: a.EarlyResume,
		TimeToResume: metrics.LatencyOf(a.Resume), Wait: metrics.LatencyOf(a.Wait)}
}

// hygieneSummary builds the session-hygiene summary (e.mu held).
func (e *engine) hygieneSummary() *metrics.HygieneSummary {
	a := &e.hyg
	if a.probed == 0 {
		return nil
	}
	h := &metrics.HygieneSummary{Probed: a.probed, Faulty: a.faulty, Verdicts: map[string]int64{}, Statuses: a.statuses}
	for _, v := range driver.SessionVerdicts {
		h.Verdicts[v.String()] = a.verdicts[v.String()]
	}
	return h
}
