package proxy

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// ClientVerdicts judge the client the proxy served, from what it sent
// (MCP 2025-11-25, Transports: §Resumability and Redelivery, §Session
// Management). Counts are requests or streams. A check is judged only
// when what it needs happened (the fault it reacts to was planted, or a
// stream broke) and the client's reaction is visible on the wire; else it
// is "n/a", with the reason in NotApplicable. Faults whose effect the
// proxy cannot see (what the client's application did with a duplicate,
// a dropped or a swapped event) are listed in NotObservable, never
// counted as passed.
type ClientVerdicts struct {
	// StreamsBroken counts SSE streams that ended while the client was
	// still reading them without their response (POST) or at all (GET),
	// after an event id was forwarded: the client should resume them.
	StreamsBroken int `json:"streams_broken"`
	// BrokenWithoutID counts such streams that ended before any event id:
	// not resumable.
	BrokenWithoutID int `json:"streams_broken_without_id"`
	// Resumes counts GETs with Last-Event-ID; RightID those whose
	// Last-Event-ID was the last id forwarded on a broken stream; WrongID
	// the others (a stale or unknown id).
	Resumes        int `json:"resumes"`
	ResumesRightID int `json:"resumes_right_last_event_id"`
	ResumesWrongID int `json:"resumes_wrong_last_event_id"`
	// ResumesHinted counts right resumes of streams that carried a retry
	// hint (the ones retry_hint judges); ResumesEarly those sent before
	// the hint had passed since the stream broke.
	ResumesHinted int `json:"resumes_with_retry_hint"`
	ResumesEarly  int `json:"resumes_before_retry_hint"`
	// NotResumed counts broken streams with an id that no resume named.
	NotResumed int `json:"broken_not_resumed"`
	// CallsBroken counts tools/call POST streams that broke before their
	// response (the ones no_resend judges).
	CallsBroken int `json:"calls_broken"`
	// RequestsResent counts tools/call POSTs repeating (same session,
	// method and params, _meta aside) a call whose stream broke before its
	// response and that no stream answered since: the tool may run twice.
	RequestsResent int `json:"requests_resent"`
	// Planted404 counts the 404s planted for live sessions; Sessions404
	// the sessions they were planted for (a session may meet several).
	// DeadSessionUsed counts the requests other than DELETE that still
	// carried the id of such a session, before or after the client
	// re-initialized; DeletedAfter404 the DELETEs of one (the client's
	// clean-up: allowed).
	Planted404      int `json:"planted_404"`
	Sessions404     int `json:"sessions_404"`
	DeadSessionUsed int `json:"dead_session_used"`
	DeletedAfter404 int `json:"deleted_after_404"`
	// Reinitialized counts the initialize requests attributed to a
	// session that met a planted 404 (at most one each). An initialize
	// carries no session id: what the wire shows of who sent it is the
	// connection it came on and the identity the client gives (User-Agent
	// and clientInfo name and version). It is attributed to a 404'd
	// session not yet re-initialized whose client gave the same identity
	// at its own initialize: the one whose 404 was answered on the same
	// connection, else the only one; where several are left (on that
	// connection, as over HTTP/2 or a shared pool, or none on it and
	// several of that identity elsewhere), the one that lost its session
	// first, counted in ReinitializedAmbiguous: which of those clients
	// re-initialized is not on the wire, only how many did. An initialize
	// of another identity is a new client's, not a re-initialization; one
	// of the same identity could be a new client's too (session churn),
	// which the wire cannot tell either. NotReinitialized counts the 404'd
	// sessions no initialize was attributed to (their client did not start
	// a new session, or stopped right after its 404: the wire cannot
	// tell).
	Reinitialized          int `json:"reinitialized_after_404"`
	ReinitializedAmbiguous int `json:"reinitialized_ambiguous"`
	NotReinitialized       int `json:"not_reinitialized_after_404"`
	// SessionsOpened counts sessions initialized through the proxy;
	// SessionsDeleted those the client ended with DELETE (of the first
	// 65,536 sessions: each table the judge keeps is bounded so).
	// SessionsEnded404 counts the opened sessions that a planted 404 or
	// the server's own 404 ended: the client was told they are gone and
	// owes them no DELETE, so delete_at_end leaves them out (a DELETE of
	// one still counts in SessionsDeleted).
	SessionsOpened   int `json:"sessions_opened"`
	SessionsDeleted  int `json:"sessions_deleted"`
	SessionsEnded404 int `json:"sessions_ended_by_404"`
	// Checks is pass, fail or n/a for each check: resume_last_event_id,
	// retry_hint, no_resend, reinitialize_after_404, delete_at_end.
	Checks map[string]string `json:"checks"`
	// Details says, for a judged check whose counts need it
	// (reinitialize_after_404, delete_at_end), what was counted and what
	// was left out.
	Details map[string]string `json:"details,omitempty"`
	// NotApplicable says, for each check that is n/a, why: what was not
	// planted or not seen.
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	// NotObservable counts, by kind, the faults planted whose effect on
	// the client is invisible to the proxy (KindsNotObservable; status:
	// the 429s and 503s, whose back-off no check judges): planted, not
	// judged here.
	NotObservable map[Kind]int `json:"planted_not_observable,omitempty"`
}

// KindsNotObservable are the fault kinds whose effect on the client the
// proxy cannot see on the wire: what the client's application did with a
// dropped, duplicated, swapped, injected, held or delayed event or a
// missing response, whether it waited out a stall or a stream kept open.
var KindsNotObservable = []Kind{KindDrop, KindDuplicate, KindSwap, KindInject, KindHoldProgress, KindDropResponse, KindDelay, KindStall, KindKeepOpen}

// maxTracked bounds each of the judge's tables.
const maxTracked = 1 << 16

type brokenStream struct {
	at    time.Time
	retry int // ms, -1 none
}

// lostSession is a session that met a planted 404.
type lostSession struct {
	seq    int    // order of the first 404
	conn   string // the connection the (last) 404 was answered on
	client string // the identity its client gave at initialize ("" unknown)
	reinit bool   // an initialize was attributed to it
}

type judge struct {
	mu        sync.Mutex
	v         ClientVerdicts
	broken    map[string]brokenStream // session + "\x00" + last id forwarded → when it broke
	cut       map[string]string       // session + rid of an unanswered call whose stream broke → its key
	cutKeys   map[string]int          // keys of those calls → how many
	dead      map[string]*lostSession // sessions answered a planted 404
	gone      map[string]bool         // sessions the server answered 404
	open      map[string]bool         // sessions opened → deleted
	client    map[string]string       // sessions opened → their client's identity
	closing   map[string]bool         // sessions the client sent DELETE for
	untracked int                     // sessions opened beyond maxTracked
}

func newJudge() *judge {
	return &judge{broken: map[string]brokenStream{}, cut: map[string]string{}, cutKeys: map[string]int{}, dead: map[string]*lostSession{},
		gone: map[string]bool{}, open: map[string]bool{}, client: map[string]string{}, closing: map[string]bool{}}
}

// clientIdentity is what an initialize says of its sender: the
// User-Agent header and params.clientInfo's name and version.
func clientIdentity(userAgent string, params []byte) string {
	var p struct {
		ClientInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	_ = json.Unmarshal(params, &p) // unparsable: the User-Agent alone
	return userAgent + "\x00" + p.ClientInfo.Name + "\x00" + p.ClientInfo.Version
}

// reinitialized attributes an initialize from conn with identity client
// to a lost session (see ClientVerdicts.Reinitialized).
func (j *judge) reinitialized(conn, client string) {
	var sameConn, first *lostSession
	n, nConn := 0, 0
	for _, l := range j.dead {
		if l.reinit || (l.client != "" && l.client != client) {
			continue
		}
		n++
		if l.conn == conn {
			nConn++
			if sameConn == nil || l.seq < sameConn.seq {
				sameConn = l
			}
		}
		if first == nil || l.seq < first.seq {
			first = l
		}
	}
	switch {
	case first == nil:
		return // a new client's session, not a re-initialization
	case sameConn != nil:
		first, n = sameConn, nConn // several on one connection (HTTP/2, a shared pool): ambiguous too
	}
	if n > 1 {
		j.v.ReinitializedAmbiguous++
	}
	first.reinit = true
	j.v.Reinitialized++
}

// callKey is a tools/call's session, method and params without _meta.
func callKey(s *stream) string {
	if s.method != "tools/call" || s.params == nil {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(s.params, &m) != nil {
		return ""
	}
	delete(m, "_meta")
	b, _ := json.Marshal(m) // map keys sorted: a canonical form
	return s.session + "\x00" + string(b)
}

func (j *judge) request(s *stream, now time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if s.method == "initialize" && j.v.Reinitialized < len(j.dead) {
		j.reinitialized(s.conn, s.client)
	}
	if s.kind == "delete" && s.session != "" && len(j.closing) < maxTracked {
		j.closing[s.session] = true // before the server acts on it: its streams' ends are no breaks
	}
	if s.session != "" && j.dead[s.session] != nil {
		if s.kind == "delete" {
			j.v.DeletedAfter404++ // ending the session it was told is gone: its clean-up
		} else {
			j.v.DeadSessionUsed++
		}
	}
	if s.kind == TargetResume {
		j.v.Resumes++
		k := s.session + "\x00" + s.lastEventID
		if b, ok := j.broken[k]; ok {
			delete(j.broken, k)
			j.v.ResumesRightID++
			if b.retry > 0 {
				j.v.ResumesHinted++
				if now.Sub(b.at) < time.Duration(b.retry)*time.Millisecond {
					j.v.ResumesEarly++
				}
			}
		} else {
			j.v.ResumesWrongID++
		}
	}
	if len(j.cutKeys) > 0 {
		if k := callKey(s); k != "" && j.cutKeys[k] > 0 {
			j.v.RequestsResent++
			j.cutKeys[k]--
			if j.cutKeys[k] == 0 {
				delete(j.cutKeys, k)
			}
		}
	}
}

func (j *judge) planted404(s *stream) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.v.Planted404++
	if l := j.dead[s.session]; l != nil {
		l.conn = s.conn
	} else if len(j.dead) < maxTracked {
		c, ok := j.client[s.session]
		if !ok {
			c = "" // opened before the proxy saw it, or untracked: any identity
		}
		j.dead[s.session] = &lostSession{seq: len(j.dead), conn: s.conn, client: c}
	}
}

// ended404 records that the server answered 404 for session.
func (j *judge) ended404(session string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.open[session]; ok {
		j.gone[session] = true // bounded by open
	}
}

func (j *judge) opened(session, client string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.v.SessionsOpened++
	if len(j.open) < maxTracked {
		j.open[session] = false
		j.client[session] = client
	} else {
		j.untracked++ // its DELETE cannot be matched: left out of delete_at_end
	}
}

func (j *judge) deleted(session string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if done, ok := j.open[session]; ok && !done {
		j.open[session] = true
		j.v.SessionsDeleted++
	}
}

// answered records a response forwarded for rid in session: a call
// whose stream broke is answered after all (on a resume).
func (j *judge) answered(session string, rid []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.cut) == 0 {
		return
	}
	k := session + "\x00" + string(rid)
	if key, ok := j.cut[k]; ok {
		delete(j.cut, k)
		if j.cutKeys[key]--; j.cutKeys[key] <= 0 {
			delete(j.cutKeys, key)
		}
	}
}

// streamEnd judges a stream that ended: broken if the client was still
// there and the stream ended without a response (a POST's, or a resumed
// POST stream's) or at all (a GET stream).
func (j *judge) streamEnd(s *stream, now time.Time) {
	pp := s.pp
	if s.ctx.Err() != nil || pp.answered {
		return // the client left, or the stream delivered its response and ended as it should
	}
	select {
	case <-s.p.done:
		return // the proxy is closing
	default:
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closing[s.session] {
		return // the client is deleting the session: its streams end
	}
	if len(pp.lastID) == 0 {
		j.v.BrokenWithoutID++
	} else {
		j.v.StreamsBroken++
		if len(j.broken) < maxTracked {
			j.broken[s.session+"\x00"+string(pp.lastID)] = brokenStream{at: now, retry: pp.retryMS}
		}
	}
	if s.kind == TargetPOST && s.method == "tools/call" {
		j.v.CallsBroken++
	}
	if s.kind == TargetPOST && s.rid != "" && len(j.cut) < maxTracked {
		if k := callKey(s); k != "" {
			j.cut[s.session+"\x00"+s.rid] = k
			j.cutKeys[k]++
		}
	}
}

// silentEnded judges a silent resume that ended while the client was
// there: a broken stream whose last id is the one the client resumed with.
func (j *judge) silentEnded(s *stream, now time.Time) {
	select {
	case <-s.p.done:
		return
	default:
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closing[s.session] {
		return
	}
	j.v.StreamsBroken++
	if len(j.broken) < maxTracked {
		j.broken[s.session+"\x00"+s.lastEventID] = brokenStream{at: now, retry: -1}
	}
}

// Verdicts returns the client verdicts so far.
func (p *Proxy) Verdicts() ClientVerdicts {
	planted := p.Planted()
	j := p.judge
	j.mu.Lock()
	defer j.mu.Unlock()
	v := j.v
	v.NotResumed = len(j.broken)
	v.Checks, v.NotApplicable = map[string]string{}, map[string]string{}
	check := func(name string, na string, pass bool) {
		switch {
		case na != "":
			v.Checks[name], v.NotApplicable[name] = "n/a", na
		case pass:
			v.Checks[name] = "pass"
		default:
			v.Checks[name] = "fail"
		}
	}
	unless := func(judged bool, why string) string {
		if judged {
			return ""
		}
		return why
	}
	check("resume_last_event_id", unless(v.StreamsBroken > 0 || v.Resumes > 0,
		"no stream broke after an event id and no resume was sent; plant cut after=N, or a storm"), v.ResumesWrongID == 0 && v.NotResumed == 0)
	hintWhy := "no broken stream was resumed with the right Last-Event-ID"
	if v.ResumesRightID > 0 {
		hintWhy = "no resumed stream carried a retry hint (the server sent none); plant retry retry=MS"
	}
	check("retry_hint", unless(v.ResumesHinted > 0, hintWhy), v.ResumesEarly == 0)
	check("no_resend", unless(v.CallsBroken > 0, "no tools/call stream broke before its response; plant cut target=tools/call"), v.RequestsResent == 0)
	v.Sessions404 = len(j.dead)
	v.NotReinitialized = len(j.dead) - v.Reinitialized
	check("reinitialize_after_404", unless(v.Planted404 > 0, "no 404 was planted; plant status code=404"), v.NotReinitialized == 0 && v.DeadSessionUsed == 0)
	if v.Planted404 > 0 {
		d := fmt.Sprintf("%d of %d sessions that met a planted 404 re-initialized by their client", v.Reinitialized, v.Sessions404)
		if v.ReinitializedAmbiguous > 0 {
			d += fmt.Sprintf(" (%d ambiguous: several clients of that identity had lost a session, sharing the initialize's connection or none on it, and the wire does not show which of them re-initialized, only how many)", v.ReinitializedAmbiguous)
		}
		if v.NotReinitialized > 0 {
			d += fmt.Sprintf("; %d not (no initialize from a client of the same identity followed: it did not start a new session, or it stopped right after its 404)", v.NotReinitialized)
		}
		if v.DeadSessionUsed > 0 {
			d += fmt.Sprintf("; %d requests still carried a 404'd session's id", v.DeadSessionUsed)
		}
		v.Details = map[string]string{"reinitialize_after_404": d}
	}
	live, liveDeleted, ended, endedDeleted := 0, 0, 0, 0
	for sid, done := range j.open {
		if j.dead[sid] != nil || j.gone[sid] {
			ended++
			if done {
				endedDeleted++
			}
			continue
		}
		live++
		if done {
			liveDeleted++
		}
	}
	v.SessionsEnded404 = ended
	deleteWhy := ""
	switch {
	case v.SessionsOpened == 0:
		deleteWhy = "no session was opened through the proxy"
	case live == 0 && j.untracked == 0:
		deleteWhy = fmt.Sprintf("every session opened (%d) was ended by a 404: none was left for the client to DELETE", ended)
	}
	check("delete_at_end", deleteWhy, liveDeleted == live)
	if deleteWhy == "" {
		d := fmt.Sprintf("%d of %d sessions still live deleted", liveDeleted, live)
		if ended > 0 {
			d += fmt.Sprintf("; %d sessions ended by a 404 (planted or the server's) need no DELETE and are not counted", ended)
			if endedDeleted > 0 {
				d += fmt.Sprintf(" (%d of them deleted anyway)", endedDeleted)
			}
		}
		if j.untracked > 0 {
			d += fmt.Sprintf("; %d sessions beyond the first %d not tracked", j.untracked, maxTracked)
		}
		if v.Details == nil {
			v.Details = map[string]string{}
		}
		v.Details["delete_at_end"] = d
	}
	if len(v.NotApplicable) == 0 {
		v.NotApplicable = nil
	}
	for _, k := range KindsNotObservable {
		if n := planted[k]; n > 0 {
			if v.NotObservable == nil {
				v.NotObservable = map[Kind]int{}
			}
			v.NotObservable[k] = n
		}
	}
	if n := planted[KindStatus] - v.Planted404; n > 0 {
		if v.NotObservable == nil {
			v.NotObservable = map[Kind]int{}
		}
		v.NotObservable[KindStatus] = n
	}
	return v
}

// NotObservableLine is the report's line for v.NotObservable ("" when
// none): "planted, not observable here: drop 2, duplicate 3 (…)".
func (v ClientVerdicts) NotObservableLine() string {
	if len(v.NotObservable) == 0 {
		return ""
	}
	out := ""
	for _, k := range append(KindsNotObservable, KindStatus) {
		if n := v.NotObservable[k]; n > 0 {
			if out != "" {
				out += ", "
			}
			out += fmt.Sprintf("%s %d", k, n)
			if k == KindStatus {
				out += " (429/503: the client's back-off is not judged)"
			}
		}
	}
	return "planted, not observable here: " + out + " (what the client's application did with them does not show on the wire; no check judged them)"
}
