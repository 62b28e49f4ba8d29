package metrics

import (
	"errors"
	"strconv"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// sessionTally is the recorder's session bookkeeping.
type sessionTally struct {
	mu       sync.Mutex
	sum      results.SessionSummary
	initHist *hdr.Histogram
	failCls  [driver.NumClasses]int64
	failEx   [driver.NumClasses]string
	hyg      hygieneTally
	get      getTally
}

type hygieneTally struct {
	probed, faulty     int64
	verdicts, statuses map[string]int64
}

type getTally struct {
	used                                                           bool
	opened, none, failed, events, requests, breaks, reopens, count int64
	faulty                                                         int64
	causes                                                         map[string]int64
	resumes, reopenTries                                           results.OpStats
	verdicts                                                       [driver.NumVerdicts]int64
	failEx                                                         string
	notes                                                          results.NotificationSummary

	viaLink, linksRefused int64 // stream links (SEP-1335): streams resumed there, links refused
}

func (t *sessionTally) lock() {
	t.mu.Lock()
	if t.initHist == nil {
		t.initHist = results.NewHistogram()
	}
}

// RecordInit records a session's initialization: res is its outcome (err
// non-nil on failure), badID whether the server's session id was outside
// visible ASCII. A set-up cut by the end of the run (canceled) is not a
// failure. Safe for concurrent use.
func (r *Recorder) RecordInit(res *driver.Result, err error, badID bool) {
	t := &r.sessions
	t.lock()
	defer t.mu.Unlock()
	if badID {
		t.sum.BadSessionIDs++
	}
	if err != nil {
		if res.Class != driver.ClassCanceled {
			t.sum.Failed++
			t.failCls[res.Class]++
			if t.failEx[res.Class] == "" {
				t.failEx[res.Class] = err.Error()
			}
		}
		return
	}
	t.sum.Opened++
	t.initHist.RecordValue(us(res.ServiceTime()))
}

// RecordGETOpen records the opening of a session's GET stream (err: nil,
// driver.ErrNoGETStream for a server offering none, or the failure). Safe
// for concurrent use.
func (r *Recorder) RecordGETOpen(err error) {
	t := &r.sessions
	t.lock()
	defer t.mu.Unlock()
	g := &t.get
	g.used = true
	switch {
	case err == nil:
	case errors.Is(err, driver.ErrNoGETStream):
		g.none++
	default:
		g.failed++
		if g.failEx == "" {
			g.failEx = err.Error()
		}
	}
}

// RecordClose records a closed session: the DELETE's error, the redirects
// it followed, its deleted-session check and its GET stream's final stats
// (zero when it had none). Faulty checks and streams go to offenders.json.
// Safe for concurrent use.
func (r *Recorder) RecordClose(closeErr error, redirects int64, h driver.Hygiene, st driver.StreamStats) {
	t := &r.sessions
	t.lock()
	defer t.mu.Unlock()
	if closeErr != nil {
		t.sum.CloseFails++
	} else {
		t.sum.Closed++
	}
	t.sum.Redirects += redirects
	if h.Checked {
		r.recordHygiene(h)
	}
	if st.Opened > 0 {
		r.recordGET(&st)
	}
}

// RecordChurn counts a session closed and replaced during the run.
func (r *Recorder) RecordChurn() {
	t := &r.sessions
	t.lock()
	t.sum.Churned++
	t.mu.Unlock()
}

// recordHygiene tallies one deleted-session check (sessions.mu held).
func (r *Recorder) recordHygiene(h driver.Hygiene) {
	a := &r.sessions.hyg
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
	r.AddOffender(results.Offender{Op: "deleted-session check", Class: h.Verdict.String(), Status: h.Status,
		Verdicts: map[string]int{h.Verdict.String(): 1},
		Error:    "ping on deleted session " + strconv.Quote(h.SessionID) + " answered HTTP " + strconv.Itoa(h.Status) + " (want 404)"})
}

// recordGET tallies one session's GET stream (sessions.mu held).
func (r *Recorder) recordGET(st *driver.StreamStats) {
	g := &r.sessions.get
	g.opened += st.Opened
	g.events += st.Events
	g.requests += st.Requests
	g.breaks += st.Breaks
	g.reopens += st.Reopens
	g.notes.AddNotifications(st.Notifications)
	for c, n := range st.BreakCauses {
		if g.causes == nil {
			g.causes = map[string]int64{}
		}
		g.causes[c] += n
	}
	if st.ErrorExample != "" && g.failEx == "" {
		g.failEx = st.ErrorExample
	}
	for _, rs := range st.Resumes {
		a := &g.resumes
		if rs.Reopen {
			a = &g.reopenTries
		}
		a.Resumes++
		if rs.OK {
			a.ResumesOK++
		}
		if results.Early(&rs) {
			a.EarlyResume++
		}
		if rs.Link {
			a.ResumesLink++
		}
		a.ResumeHists()
		a.Resume.RecordValue(us(rs.TimeToResume))
		a.Wait.RecordValue(us(rs.Delay))
	}
	g.linksRefused += st.LinksRefused
	if st.RetryCapped != nil {
		g.resumes.RetryCapped.Add(*st.RetryCapped)
	}
	if st.ResumeLimited {
		g.resumes.Classes[driver.ClassResumeLimit]++
	}
	if st.Ledger.Checked {
		g.count++
		if viaLink(st.Resumes) {
			g.viaLink++
		}
		for i, c := range st.Ledger.Counts {
			g.verdicts[i] += int64(c)
		}
		if st.Ledger.Faulty() {
			g.faulty++
			r.AddOffender(results.Offender{Op: "GET stream", Start: st.Since, Class: st.LastError, Verdicts: driver.VerdictMap(st.Ledger.Counts),
				EventIDs: st.Ledger.EventIDs(), Resumes: len(st.Resumes), Evidence: st.Ledger.Evidence})
		}
	}
}

// Sessions returns the session summary so far: set-up, teardown, churn,
// the deleted-session checks. Safe for concurrent use.
func (r *Recorder) Sessions() results.SessionSummary {
	t := &r.sessions
	t.lock()
	defer t.mu.Unlock()
	s := t.sum
	s.Initialize = results.LatencyOf(t.initHist)
	for c, n := range t.failCls {
		if n == 0 {
			continue
		}
		if s.FailClasses == nil {
			s.FailClasses, s.FailExamples = map[string]int64{}, map[string]string{}
		}
		name := driver.Class(c).String()
		s.FailClasses[name] = n
		if ex := t.failEx[c]; ex != "" {
			s.FailExamples[name] = ex
		}
	}
	if a := &t.hyg; a.probed > 0 {
		h := &results.HygieneSummary{Probed: a.probed, Faulty: a.faulty, Verdicts: map[string]int64{}, Statuses: a.statuses}
		for _, v := range driver.SessionVerdicts {
			h.Verdicts[v.String()] = a.verdicts[v.String()]
		}
		s.Hygiene = h
	}
	return s
}

// GETStreams returns the GET-stream summary so far (nil when no session
// opened one). Safe for concurrent use.
func (r *Recorder) GETStreams() *results.GETStreamSummary {
	t := &r.sessions
	t.lock()
	defer t.mu.Unlock()
	g := &t.get
	if !g.used {
		return nil
	}
	gs := &results.GETStreamSummary{Opened: g.opened, None: g.none, Failed: g.failed, Events: g.events, Requests: g.requests,
		Breaks: g.breaks, BreakCauses: g.causes, Reopens: g.reopens, FailExample: g.failEx,
		Resumes: results.ResumeSummaryOf(&g.resumes), ReopenAttempts: results.ResumeSummaryOf(&g.reopenTries), Notifications: g.notes.OrNil()}
	if g.count > 0 {
		gs.Ledger = results.LedgerOf(g.count, g.faulty, g.verdicts)
		gs.Ledger.ViaLink, gs.Ledger.LinksRefused = g.viaLink, g.linksRefused
	}
	return gs
}

// OffendersFile returns offenders.json's content: the first faulty
// streams and how many there were.
func (r *Recorder) OffendersFile() results.OffendersFile {
	first, n := r.Offenders()
	f := results.OffendersFile{Faulty: n, First: first}
	r.offenders.mu.Lock()
	f.CheckFailures, f.FirstChecks = r.offenders.checkSeen, append([]results.CheckOffender(nil), r.offenders.checks...)
	r.offenders.mu.Unlock()
	return f
}
