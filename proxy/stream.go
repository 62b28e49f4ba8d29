package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// stream is one request and the answer the proxy forwards for it.
type stream struct {
	p           *Proxy
	idx         int64
	kind        string // post, get, resume, delete, other
	session     string
	lastEventID string // the client's Last-Event-ID (resume)
	method, rid string
	msgKind     jsonrpc.Kind
	params      []byte
	rng         *rand.Rand
	// conn is the client's end of the connection the request came on
	// (RemoteAddr); client, for an initialize, the identity the client
	// gave (clientIdentity).
	conn, client string

	// Faults drawn for this stream.
	statusFault *Fault
	replay      *Fault
	faults      []*Fault // the rest (pipeline faults)

	pp  *pipe
	ctx context.Context // the client's request

	killMu  sync.Mutex
	killed  chan struct{} // closed by kill
	killHow Close
}

// pick draws the stream's faults: one uniform draw per fault of the plan,
// in plan order, whether or not the fault applies, so that the draws of a
// stream do not depend on which faults apply to it.
func (s *stream) pick() {
	s.killed = make(chan struct{})
	for i := range s.p.cfg.Faults {
		f := &s.p.cfg.Faults[i]
		u := s.rng.Float64()
		if f.Kind == KindStorm || u >= f.P || !f.matches(s) {
			continue
		}
		switch f.Kind {
		case KindStatus:
			if s.statusFault == nil && (f.Code != http.StatusNotFound || s.session != "") {
				s.statusFault = f
			}
		case KindReplay:
			if s.replay == nil {
				s.replay = f
			}
		default:
			s.faults = append(s.faults, f)
		}
	}
}

// matches reports whether the fault's target selects the stream. POSTs of
// initialize and of notifications are selected only by naming their method.
func (f *Fault) matches(s *stream) bool {
	switch f.Target {
	case TargetAny:
		return s.kind == TargetGET || s.kind == TargetResume || (s.kind == TargetPOST && s.msgKind == jsonrpc.KindRequest && s.method != "initialize")
	case TargetPOST:
		return s.kind == TargetPOST && s.msgKind == jsonrpc.KindRequest && s.method != "initialize"
	case TargetGET, TargetResume:
		return s.kind == f.Target
	}
	return s.kind == TargetPOST && s.method == f.Target
}

// kill ends the stream now (a storm): the pipe's upstream body is closed
// and the stream ends as how says.
func (s *stream) kill(how Close) {
	s.killMu.Lock()
	defer s.killMu.Unlock()
	select {
	case <-s.killed:
		return
	default:
	}
	s.killHow = how
	close(s.killed)
	if s.pp != nil {
		s.pp.body.Close()
	}
}

// serveSilent accepts a resume and sends nothing until the client leaves,
// f.For passes, a storm or Close.
func (s *stream) serveSilent(w http.ResponseWriter, r *http.Request, f *Fault) {
	s.p.plant(s, KindReplay, "silent: accepted the resume from "+strconv.Quote(s.lastEventID)+" and sent nothing")
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if s.session != "" {
		w.Header().Set("Mcp-Session-Id", s.session)
	}
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
	s.p.mu.Lock()
	s.p.open[s.idx] = s
	s.p.mu.Unlock()
	defer func() {
		s.p.mu.Lock()
		delete(s.p.open, s.idx)
		s.p.mu.Unlock()
	}()
	var timeout <-chan time.Time
	if f.For > 0 {
		t := time.NewTimer(f.For)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-r.Context().Done():
	case <-timeout:
	case <-s.p.done:
	case <-s.killed:
		s.p.plant(s, KindStorm, "closed the silent resume ("+string(s.killHow)+")")
		if s.killHow == CloseRST {
			panic(http.ErrAbortHandler)
		}
	}
	s.p.log.log(Line{Ev: "end", Stream: s.idx, What: "silent"})
	if r.Context().Err() == nil {
		// The client still holds the Last-Event-ID it resumed with: the
		// next resume should carry it again.
		s.p.judge.silentEnded(s, time.Now())
	}
}

// heldEvent is an event copied out of the decoder's buffers.
type heldEvent struct {
	id    []byte
	hasID bool
	typ   []byte
	data  []byte
	retry int
	msg   msgInfo
}

// msgInfo is what the proxy knows of an event's message.
type msgInfo struct {
	kind  string // progress, response, request, notification, empty, invalid
	rid   []byte
	token []byte
}

func classify(data []byte) msgInfo {
	if len(data) == 0 {
		return msgInfo{kind: "empty"}
	}
	m, err := jsonrpc.Parse(data)
	if err != nil {
		return msgInfo{kind: "invalid"}
	}
	mi := msgInfo{kind: msgName(m), rid: m.ID}
	if mi.kind == "progress" {
		mi.token = jsonrpc.Field(m.Params, "progressToken")
	}
	return mi
}

func msgName(m jsonrpc.Message) string {
	switch m.Kind {
	case jsonrpc.KindResponse:
		return "response"
	case jsonrpc.KindRequest:
		return "request"
	case jsonrpc.KindNotification:
		if string(m.Method) == "notifications/progress" {
			return "progress"
		}
		return "notification"
	}
	return "invalid"
}

func (mi msgInfo) is(sel string) bool {
	switch sel {
	case EventProgress:
		return mi.kind == "progress"
	case EventResponse:
		return mi.kind == "response"
	}
	return mi.kind != "empty"
}

// pipe is the event pipeline of one SSE answer: it decodes the upstream's
// events, plants the stream's faults and re-encodes the events for the
// ReverseProxy, which flushes each Read's bytes at once. It holds one
// event (plus those a hold-progress or swap fault keeps back), never the
// stream.
type pipe struct {
	s    *stream
	body io.ReadCloser
	dec  *sse.Decoder
	out  []byte
	off  int
	err  error // returned once out is drained

	upEvents  int   // events read from upstream
	matched   []int // per fault: events its Event selected so far
	sawID     bool
	lastID    []byte // last id forwarded
	retryMS   int    // retry hint in effect at the client (-1 none)
	answered  bool   // the response was forwarded
	held      []heldEvent
	swap      *heldEvent
	swapF     *Fault
	skip      int // replay too-little: replayed events left to skip
	injecting bool
	linger    *Fault // keep-open: hold the stream after the upstream's end
}

func (s *stream) newPipe(body io.ReadCloser) io.ReadCloser {
	pp := &pipe{s: s, body: body, dec: sse.NewDecoder(body), matched: make([]int, len(s.faults)), retryMS: -1}
	if f := s.replay; f != nil && f.Mode == ReplayTooLittle {
		pp.skip = f.N
	}
	for _, f := range s.faults {
		if f.Kind == KindDelay {
			s.p.plant(s, KindDelay, "each event held back "+f.Delay.String())
		}
	}
	s.killMu.Lock()
	s.pp = pp
	s.killMu.Unlock()
	return pp
}

var errCut = errors.New("mcpbench proxy: stream cut (planted)")

func (pp *pipe) Read(b []byte) (int, error) {
	for pp.off == len(pp.out) {
		if pp.err != nil {
			return 0, pp.err
		}
		pp.out, pp.off = pp.out[:0], 0
		pp.step()
	}
	n := copy(b, pp.out[pp.off:])
	pp.off += n
	return n, nil
}

func (pp *pipe) Close() error {
	pp.dec.Reset(nil)
	return pp.body.Close()
}

// wait sleeps d, ending early (false) when the stream is killed, the
// proxy closes or the client leaves.
func (pp *pipe) wait(d time.Duration) bool {
	var c <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		c = t.C
	}
	select {
	case <-c:
		return true
	case <-pp.s.killed:
	case <-pp.s.p.done:
	case <-pp.s.ctx.Done():
	}
	return false
}

// end sets how the stream ends: fin (io.EOF) or rst (an error: the
// ReverseProxy aborts the response).
func (pp *pipe) end(how Close, what string) {
	if how == CloseFIN {
		pp.err = io.EOF
	} else {
		pp.err = errCut
	}
	pp.s.p.log.log(Line{Ev: "end", Stream: pp.s.idx, What: what})
}

// step reads one upstream event and appends what the client gets to out,
// or sets err.
func (pp *pipe) step() {
	s, p := pp.s, pp.s.p
	if pp.linger != nil {
		pp.wait(pp.linger.For)
		pp.err = io.EOF
		return
	}
	select {
	case <-s.killed:
		p.plant(s, KindStorm, "closed the GET stream ("+string(s.killHow)+")")
		pp.end(s.killHow, "storm "+string(s.killHow))
		return
	default:
	}
	ev, err := pp.dec.Next()
	if err != nil {
		select {
		case <-s.killed:
			p.plant(s, KindStorm, "closed the GET stream ("+string(s.killHow)+")")
			pp.end(s.killHow, "storm "+string(s.killHow))
			return
		default:
		}
		pp.flushHeld()
		if err != io.EOF {
			pp.err = err
			p.log.log(Line{Ev: "end", Stream: s.idx, What: "upstream: " + err.Error()})
			return
		}
		for _, f := range s.faults {
			if f.Kind == KindKeepOpen && pp.answered {
				p.plant(s, KindKeepOpen, "kept the stream open after its response")
				p.log.log(Line{Ev: "end", Stream: s.idx, What: "keep-open"})
				pp.linger = f // forward what is pending, then hold the stream
				return
			}
		}
		pp.err = io.EOF
		p.log.log(Line{Ev: "end", Stream: s.idx, What: "eof"})
		return
	}
	i := pp.upEvents
	pp.upEvents++
	mi := classify(ev.Data)
	for _, f := range s.faults {
		switch f.Kind {
		case KindCut:
			if (f.BeforeID && ev.HasID && !pp.sawID) || (f.Mid < 0 && !f.BeforeID && i == f.After) {
				p.plant(s, KindCut, fmt.Sprintf("cut before event %d (%s), %s; last id forwarded %q", i, whichCut(f), f.Close, pp.lastID))
				pp.end(f.Close, "cut "+string(f.Close))
				return
			}
			if f.Mid == i {
				enc := appendEvent(nil, ev.ID, ev.HasID, ev.Type, ev.Data, pp.retryFor(ev.Retry))
				half := enc[:max(1, (len(enc)-1)/2)]
				pp.out = append(pp.out, half...)
				p.plant(s, KindCut, fmt.Sprintf("cut inside event %d after %d of its %d bytes, %s; last id forwarded %q", i, len(half), len(enc), f.Close, pp.lastID))
				pp.end(f.Close, "cut mid-event "+string(f.Close))
				return
			}
		case KindStall:
			if i == f.After {
				p.plant(s, KindStall, fmt.Sprintf("stalled %v before event %d", f.For, i))
				pp.wait(f.For)
			}
		case KindDelay:
			pp.wait(f.Delay)
		}
	}
	if pp.skip > 0 && mi.kind != "empty" {
		pp.skip--
		p.plant(s, KindReplay, fmt.Sprintf("too-little: skipped replayed event %q (%s%s)", ev.ID, mi.kind, tokenText(mi)))
		pp.noteID(ev)
		return
	}
	drop, dup, strip := false, false, false
	var inject []byte
	for j, f := range s.faults {
		switch f.Kind {
		case KindDropResponse:
			if mi.kind == "response" {
				drop = true
				p.plant(s, KindDropResponse, fmt.Sprintf("dropped the response id=%s (event %q)", mi.rid, ev.ID))
			}
		case KindHoldProgress:
			if mi.kind == "progress" && !pp.answered {
				pp.held = append(pp.held, hold(ev, mi))
				return
			}
		}
		if !f.isEvent() || !mi.is(f.Event) {
			continue
		}
		n := pp.matched[j]
		pp.matched[j]++
		if f.Kind == KindSwap && pp.swap != nil && pp.swapF == f {
			defer pp.releaseSwap(ev.ID)
			continue
		}
		if n != f.At {
			continue
		}
		switch f.Kind {
		case KindDrop:
			drop = true
			p.plant(s, KindDrop, fmt.Sprintf("dropped event %q (%s%s)", ev.ID, mi.kind, tokenText(mi)))
		case KindDuplicate:
			dup, strip = true, f.Strip
		case KindSwap:
			h := hold(ev, mi)
			pp.swap, pp.swapF = &h, f
			return
		case KindInject:
			if inject = p.foreign(s, f.From); inject != nil {
				p.plant(s, KindInject, fmt.Sprintf("injected a progress event of another stream (from=%s) before event %q: %s", f.From, ev.ID, inject))
			}
		}
	}
	if pp.swap != nil && mi.kind == "response" {
		pp.emitHeld(*pp.swap) // the response comes first: no swap
		pp.swap = nil
	}
	if inject != nil {
		pp.injecting = true // not remembered: its token is another stream's
		pp.emit(nil, false, nil, inject, -1, classify(inject))
		pp.injecting = false
	}
	if drop {
		pp.noteID(ev)
		return
	}
	pp.emit(ev.ID, ev.HasID, ev.Type, ev.Data, ev.Retry, mi)
	if dup {
		id := ev.ID
		if strip {
			id = nil
		}
		pp.emit(id, !strip, ev.Type, ev.Data, -1, mi)
		p.plant(s, KindDuplicate, fmt.Sprintf("forwarded event %q (%s%s) twice, the copy %s", ev.ID, mi.kind, tokenText(mi), map[bool]string{true: "without its id", false: "with its id"}[strip]))
	}
	if mi.kind == "response" {
		pp.answered = true
		p.judge.answered(s.session, mi.rid)
		if len(pp.held) > 0 {
			for _, h := range pp.held {
				p.plant(s, KindHoldProgress, fmt.Sprintf("progress%s held until after the response", tokenText(h.msg)))
			}
			pp.flushHeld()
		}
	}
}

func (pp *pipe) releaseSwap(after []byte) {
	h := *pp.swap
	pp.swap = nil
	pp.emitHeld(h)
	pp.s.p.plant(pp.s, KindSwap, fmt.Sprintf("forwarded event %q (%s%s) after event %q", h.id, h.msg.kind, tokenText(h.msg), after))
}

func whichCut(f *Fault) string {
	if f.BeforeID {
		return "before the first id"
	}
	return "after " + strconv.Itoa(f.After) + " events"
}

func tokenText(mi msgInfo) string {
	switch {
	case len(mi.token) > 0:
		return " token=" + string(mi.token)
	case len(mi.rid) > 0:
		return " id=" + string(mi.rid)
	}
	return ""
}

func hold(ev sse.Event, mi msgInfo) heldEvent {
	h := heldEvent{id: bytes.Clone(ev.ID), hasID: ev.HasID, typ: bytes.Clone(ev.Type), data: bytes.Clone(ev.Data), retry: ev.Retry, msg: mi}
	h.msg.rid, h.msg.token = bytes.Clone(mi.rid), bytes.Clone(mi.token)
	return h
}

func (pp *pipe) flushHeld() {
	if pp.swap != nil {
		pp.emitHeld(*pp.swap)
		pp.swap = nil
	}
	for _, h := range pp.held {
		pp.emitHeld(h)
	}
	pp.held = pp.held[:0]
}

func (pp *pipe) emitHeld(h heldEvent) {
	pp.emit(h.id, h.hasID, h.typ, h.data, h.retry, h.msg)
}

// noteID records an event the client did not get (its id is not the
// client's).
func (pp *pipe) noteID(ev sse.Event) {
	if ev.HasID {
		pp.sawID = true
	}
}

// retryFor applies the retry faults to an event's retry field (-1: none).
func (pp *pipe) retryFor(r int) int {
	for _, f := range pp.s.faults {
		if f.Kind != KindRetry {
			continue
		}
		if f.Retry < 0 {
			if r >= 0 {
				pp.s.p.plant(pp.s, KindRetry, fmt.Sprintf("removed retry hint %d ms", r))
			}
			return -1
		}
		if r != f.Retry && (r >= 0 || pp.upEvents == 1) {
			pp.s.p.plant(pp.s, KindRetry, fmt.Sprintf("retry hint %d ms rewritten to %d ms", r, f.Retry))
			return f.Retry
		}
	}
	return r
}

// emit appends an event for the client and logs it.
func (pp *pipe) emit(id []byte, hasID bool, typ, data []byte, retry int, mi msgInfo) {
	s, p := pp.s, pp.s.p
	retry = pp.retryFor(retry)
	pp.out = appendEvent(pp.out, id, hasID, typ, data, retry)
	if retry >= 0 {
		pp.retryMS = retry
	}
	if hasID {
		pp.sawID = true
		if p.hasReplay {
			p.mu.Lock()
			p.ids.add(idEntry{id: string(id), prev: string(pp.lastID), session: s.session, stream: s.idx})
			p.mu.Unlock()
		}
		pp.lastID = append(pp.lastID[:0], id...)
	}
	if p.hasInject && mi.kind == "progress" && s.kind == TargetPOST && !pp.injecting {
		p.remember(s, data)
	}
	if p.log != nil {
		ln := Line{Ev: "event", Stream: s.idx, StreamKind: s.kind, Session: s.session, Msg: mi.kind, RID: string(mi.rid), Token: string(mi.token)}
		if hasID {
			ln.ID = string(id)
		}
		p.log.log(ln)
	}
}

// appendEvent encodes one SSE event: id, retry, event and data lines (one
// per line of data; "data: " alone for empty data, as MCP servers write a
// priming event), then a blank line.
func appendEvent(dst, id []byte, hasID bool, typ, data []byte, retry int) []byte {
	if hasID {
		dst = append(append(append(dst, "id: "...), id...), '\n')
	}
	if retry >= 0 {
		dst = strconv.AppendInt(append(dst, "retry: "...), int64(retry), 10)
		dst = append(dst, '\n')
	}
	if len(typ) > 0 {
		dst = append(append(append(dst, "event: "...), typ...), '\n')
	}
	if len(data) == 0 {
		dst = append(dst, "data: \n"...)
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		dst = append(append(append(dst, "data: "...), line...), '\n')
	}
	return append(dst, '\n')
}
