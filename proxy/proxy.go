package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
)

// Config configures a Proxy. The zero values of the optional fields are
// their defaults.
type Config struct {
	// Upstream is the MCP endpoint the proxy forwards to (http:// or
	// https://, with its path, e.g. http://127.0.0.1:8080/mcp). Required.
	// The client's path and query are replaced by the upstream's.
	Upstream *url.URL
	// Faults is the plan; none makes a transparent proxy that still logs.
	Faults []Fault
	// Seed seeds the fault choices: stream n (counting the proxy's requests
	// from 1) draws from a PCG seeded with (Seed, n), so a run with the same
	// requests in the same order plants the same faults.
	Seed uint64
	// Log receives the ground truth as JSON lines (see Line); nil logs
	// nothing. Written through a 64 KiB buffer, flushed by Close.
	Log io.Writer
	// Transport reaches the upstream; nil means a transport of its own
	// (HTTP/1.1, or HTTP/2 over TLS when the server offers it; h2c with
	// UpstreamH2C).
	Transport http.RoundTripper
	// UpstreamH2C speaks HTTP/2 without TLS (prior knowledge) to an
	// http:// upstream.
	UpstreamH2C bool
	// UpstreamCAs, when set, are the roots that verify an https://
	// upstream's certificate (a private CA); nil means the system's.
	UpstreamCAs *x509.CertPool
	// MaxBody bounds the part of a POST body the proxy reads to learn its
	// JSON-RPC method and id, in bytes; 0 means 4 MiB. A longer body is
	// forwarded whole, logged without a method.
	MaxBody int64
	// AllowedOrigins are the browser origins ("scheme://host[:port]", "*"
	// for all) served besides the proxy's own; Hosts the Host names besides
	// the loopback ones a request that reaches the proxy on a loopback
	// address may carry (e.g. the names of its TLS certificate). Any other
	// request with a foreign Origin or Host gets 403 and is not forwarded
	// (DNS rebinding protection: the rule of mcpbench serve, netutil.Guard).
	AllowedOrigins []string
	Hosts          []string
}

// Proxy is a fault-injecting reverse proxy for MCP's Streamable HTTP
// transport: an http.Handler that forwards every request to one upstream
// endpoint and every response back, parsing SSE answers event by event
// (never buffering a stream whole), planting the configured faults and
// logging what it forwarded and planted. Safe for concurrent use; Close
// once when done.
type Proxy struct {
	cfg   Config
	guard netutil.Guard
	rp    *httputil.ReverseProxy
	log   *logger
	start time.Time
	next  atomic.Int64
	judge *judge
	done  chan struct{}
	once  sync.Once
	storm []*time.Timer

	hasInject, hasReplay, hasStorm bool

	mu      sync.Mutex
	open    map[int64]*stream // open SSE streams, for storms
	planted map[Kind]int
	recent  [64]recentEvent // latest progress events of POST streams, for inject
	nRecent int
	ids     idRing // event id → the stream and id before it, for replays
}

type recentEvent struct {
	session string
	stream  int64
	data    []byte
}

// streamKey carries a request's stream through the ReverseProxy.
type streamKey struct{}

// New returns a proxy for cfg. Storm timers start now.
func New(cfg Config) (*Proxy, error) {
	if cfg.Upstream == nil || (cfg.Upstream.Scheme != "http" && cfg.Upstream.Scheme != "https") || cfg.Upstream.Host == "" {
		return nil, errors.New("proxy: upstream: want an absolute http:// or https:// URL, e.g. http://127.0.0.1:8080/mcp")
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 4 << 20
	}
	origins, err := netutil.NewOriginPolicy(cfg.AllowedOrigins)
	if err != nil {
		return nil, fmt.Errorf("proxy: allowed origin %w", err)
	}
	p := &Proxy{cfg: cfg, guard: netutil.Guard{Hosts: cfg.Hosts, Origins: origins}, start: time.Now(), done: make(chan struct{}), open: map[int64]*stream{}, planted: map[Kind]int{}}
	p.log = newLogger(cfg.Log, p.start)
	p.judge = newJudge()
	p.ids.init(1 << 16)
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // the upstream is reached directly, whatever the environment says
		t.MaxIdleConnsPerHost = 1024
		if cfg.UpstreamCAs != nil {
			t.TLSClientConfig = &tls.Config{RootCAs: cfg.UpstreamCAs}
		}
		if cfg.UpstreamH2C {
			t.Protocols = new(http.Protocols)
			t.Protocols.SetUnencryptedHTTP2(true)
		}
		tr = t
	}
	up := cfg.Upstream
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path, r.Out.URL.RawPath, r.Out.URL.RawQuery = up.Scheme, up.Host, up.Path, up.RawPath, up.RawQuery
			r.Out.Host = r.In.Host // Host passes through unchanged (Origin is never touched)
		},
		Transport:      tr,
		FlushInterval:  -1,
		BufferPool:     copyBuffers{},
		ModifyResponse: p.modifyResponse,
		ErrorLog:       log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if s, _ := r.Context().Value(streamKey{}).(*stream); s != nil {
				p.log.log(Line{Ev: "end", Stream: s.idx, What: "upstream error: " + err.Error()})
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	for i := range cfg.Faults {
		f := &cfg.Faults[i]
		switch f.Kind {
		case KindInject:
			p.hasInject = true
		case KindReplay:
			p.hasReplay = true
		case KindStorm:
			p.hasStorm = true
			p.startStorm(f)
		}
	}
	return p, nil
}

func (p *Proxy) startStorm(f *Fault) {
	var fire func()
	fire = func() {
		select {
		case <-p.done:
			return
		default:
		}
		p.Storm(f.Close)
		if f.Every > 0 {
			p.mu.Lock()
			p.storm = append(p.storm, time.AfterFunc(f.Every, fire))
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	p.storm = append(p.storm, time.AfterFunc(f.StormAt, fire))
	p.mu.Unlock()
}

// Storm closes every open GET stream (standalone and resumed) at once,
// ending each as close says, and returns how many it closed. Each is
// logged as a planted "storm" fault.
func (p *Proxy) Storm(close Close) int {
	p.mu.Lock()
	var hit []*stream
	for _, s := range p.open {
		if s.kind == TargetGET || s.kind == TargetResume {
			hit = append(hit, s)
		}
	}
	p.mu.Unlock()
	for _, s := range hit {
		s.kill(close)
	}
	return len(hit)
}

// Planted returns how many faults of each kind the proxy planted so far.
func (p *Proxy) Planted() map[Kind]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := make(map[Kind]int, len(p.planted))
	for k, n := range p.planted {
		m[k] = n
	}
	return m
}

// Close stops the storms, ends the streams the proxy holds open
// (keep-open, silent replays) and flushes the log. It does not close the
// server the proxy is mounted on. Idempotent.
func (p *Proxy) Close() error {
	p.once.Do(func() {
		close(p.done)
		p.mu.Lock()
		for _, t := range p.storm {
			t.Stop()
		}
		p.mu.Unlock()
	})
	return p.log.flush()
}

func (p *Proxy) plant(s *stream, k Kind, what string) {
	p.mu.Lock()
	p.planted[k]++
	p.mu.Unlock()
	p.log.log(Line{Ev: "fault", Fault: string(k), Stream: s.idx, StreamKind: s.kind, Session: s.session, RID: s.rid, What: what})
}

// ServeHTTP forwards one request, planting the faults its stream draws.
// A request with a foreign Host or Origin (Config.AllowedOrigins) gets 403
// and is neither forwarded nor logged.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e := p.guard.Check(r); e != nil {
		http.Error(w, e.Error(), http.StatusForbidden)
		return
	}
	s := &stream{p: p, idx: p.next.Add(1), session: r.Header.Get("Mcp-Session-Id"), lastEventID: r.Header.Get("Last-Event-ID"), conn: r.RemoteAddr}
	s.ctx = r.Context()
	s.rng = newRNG(p.cfg.Seed, s.idx)
	var body []byte
	switch r.Method {
	case http.MethodPost:
		s.kind = TargetPOST
		body = p.readBody(r)
		if m, err := jsonrpc.Parse(body); err == nil {
			s.method, s.rid, s.msgKind = string(m.Method), string(m.ID), m.Kind
			if m.Kind == jsonrpc.KindRequest && len(m.Params) > 0 {
				s.params = m.Params
			}
			if s.method == "initialize" {
				s.client = clientIdentity(r.Header.Get("User-Agent"), m.Params)
			}
		}
	case http.MethodGet:
		s.kind = TargetGET
		if s.lastEventID != "" {
			s.kind = TargetResume
		}
	case http.MethodDelete:
		s.kind = "delete"
	default:
		s.kind = "other"
	}
	p.log.log(Line{Ev: "request", Stream: s.idx, StreamKind: s.kind, HTTP: r.Method, Proto: r.Proto, Session: s.session, Method: s.method, RID: s.rid, LastEventID: s.lastEventID})
	p.judge.request(s, time.Now())
	s.pick()

	if f := s.statusFault; f != nil {
		if f.RetryAfter >= 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		p.plant(s, KindStatus, fmt.Sprintf("answered %d without forwarding", f.Code))
		if f.Code == http.StatusNotFound {
			p.judge.planted404(s)
		}
		http.Error(w, "planted by mcpbench proxy", f.Code)
		return
	}
	if f := s.replay; f != nil && f.Mode == ReplaySilent {
		s.serveSilent(w, r, f)
		return
	}
	if f := s.replay; f != nil && (f.Mode == ReplayTooMuch || f.Mode == ReplayWrongPlace) {
		if id, ok := p.replayFrom(s, f); ok {
			r.Header.Set("Last-Event-ID", id)
			p.plant(s, KindReplay, fmt.Sprintf("%s: resumed upstream from %q instead of %q", f.Mode, id, s.lastEventID))
		}
	}
	defer p.ended(s)
	if len(s.faults) > 0 || p.hasStorm {
		w = &flushWriter{ResponseWriter: w}
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), streamKey{}, s)))
}

// flushWriter sends an SSE answer's headers at once, so that a cut before
// the first event still reaches the client as an accepted stream that
// broke (the ReverseProxy would hold them until the first body write).
// Only streams that may meet a fault pay the extra write.
type flushWriter struct{ http.ResponseWriter }

func (w *flushWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && isEventStream(w.Header().Get("Content-Type")) {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *flushWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// newRNG is stream idx's generator: a PCG seeded with (seed, idx).
func newRNG(seed uint64, idx int64) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(idx))) }

// readBody reads up to MaxBody of a POST body for its JSON-RPC header and
// puts it back in front of the rest.
func (p *Proxy) readBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, p.cfg.MaxBody))
	if err != nil || int64(len(b)) == p.cfg.MaxBody {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		return nil
	}
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return b
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	s, _ := resp.Request.Context().Value(streamKey{}).(*stream)
	if s == nil {
		return nil
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && s.session == "" {
		s.session = sid
		if s.method == "initialize" {
			p.judge.opened(sid, s.client)
		}
	}
	ct := resp.Header.Get("Content-Type")
	sse := isEventStream(ct)
	p.log.log(Line{Ev: "answer", Stream: s.idx, Session: s.session, Status: resp.StatusCode, Msg: ct, Proto: resp.Proto})
	if s.kind == "delete" && resp.StatusCode < 300 {
		p.judge.deleted(s.session)
	}
	if resp.StatusCode == http.StatusNotFound && s.session != "" {
		p.judge.ended404(s.session) // the server ended it: no DELETE owed
	}
	if sse && resp.StatusCode == http.StatusOK {
		// Events are re-encoded (and faults change them): the upstream's
		// length no longer holds.
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Body = s.newPipe(resp.Body)
		p.mu.Lock()
		p.open[s.idx] = s
		p.mu.Unlock()
	} else if s.kind == TargetPOST && resp.StatusCode == http.StatusOK && resp.Body != nil {
		resp.Body = &jsonTap{s: s, rc: resp.Body}
	}
	return nil
}

func (p *Proxy) ended(s *stream) {
	p.mu.Lock()
	delete(p.open, s.idx)
	p.mu.Unlock()
	if s.pp != nil {
		p.judge.streamEnd(s, time.Now())
	}
}

func isEventStream(ct string) bool {
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

// replayFrom picks the Last-Event-ID a too-much or wrong-place replay
// sends upstream.
func (p *Proxy) replayFrom(s *stream, f *Fault) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.ids.get(s.lastEventID)
	if !ok {
		return "", false
	}
	switch f.Mode {
	case ReplayTooMuch:
		id := s.lastEventID
		for range f.N {
			e, ok := p.ids.get(id)
			if !ok || e.prev == "" {
				return "", false
			}
			id = e.prev
		}
		return id, true
	default: // wrong-place: the newest id of another stream of the session
		for i := p.ids.n - 1; i >= 0 && i >= p.ids.n-len(p.ids.ring); i-- {
			e := p.ids.ring[i%len(p.ids.ring)]
			if e.session == at.session && e.stream != at.stream && e.id != "" {
				return e.id, true
			}
		}
	}
	return "", false
}

// remember records a forwarded progress event for inject faults.
func (p *Proxy) remember(s *stream, data []byte) {
	p.mu.Lock()
	e := &p.recent[p.nRecent%len(p.recent)]
	e.session, e.stream, e.data = s.session, s.idx, append(e.data[:0], data...)
	p.nRecent++
	p.mu.Unlock()
}

// foreign returns a recent progress event of another stream: of the same
// session (from=session) or of another session (from=other).
func (p *Proxy) foreign(s *stream, from string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := p.nRecent - 1; i >= 0 && i >= p.nRecent-len(p.recent); i-- {
		e := &p.recent[i%len(p.recent)]
		if e.stream == s.idx {
			continue
		}
		if (from == "other") != (e.session == s.session) {
			return bytes.Clone(e.data)
		}
	}
	return nil
}

// idRing remembers the latest event ids forwarded (bounded), each with the
// id before it on its stream.
type idRing struct {
	ring []idEntry
	n    int
	at   map[string]int // id → index into ring (absolute count)
}

type idEntry struct {
	id, prev, session string
	stream            int64
}

func (r *idRing) init(n int) { r.ring, r.at = make([]idEntry, n), make(map[string]int, n) }

func (r *idRing) add(e idEntry) {
	slot := &r.ring[r.n%len(r.ring)]
	if r.n >= len(r.ring) && r.at[slot.id] == r.n-len(r.ring) {
		delete(r.at, slot.id)
	}
	*slot = e
	r.at[e.id] = r.n
	r.n++
}

func (r *idRing) get(id string) (idEntry, bool) {
	i, ok := r.at[id]
	if !ok {
		return idEntry{}, false
	}
	return r.ring[i%len(r.ring)], true
}

// jsonTap logs a JSON answer's message as it passes (the first 64 KiB).
type jsonTap struct {
	s    *stream
	rc   io.ReadCloser
	buf  []byte
	done bool
}

func (t *jsonTap) Read(b []byte) (int, error) {
	n, err := t.rc.Read(b)
	if len(t.buf) < 64<<10 {
		t.buf = append(t.buf, b[:n]...)
	}
	if err == io.EOF && !t.done {
		t.done = true
		if m, perr := jsonrpc.Parse(t.buf); perr == nil {
			t.s.p.log.log(Line{Ev: "event", Stream: t.s.idx, Session: t.s.session, Msg: msgName(m), RID: string(m.ID)})
			if m.Kind == jsonrpc.KindResponse {
				t.s.p.judge.answered(t.s.session, m.ID)
			}
		}
	}
	return n, err
}

func (t *jsonTap) Close() error { return t.rc.Close() }

// IsLoopback reports whether a listen address (host:port) binds only
// loopback interfaces: 127.0.0.0/8, ::1 or localhost. An empty host (all
// interfaces) is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// copyBuffers lends the ReverseProxy 4 KiB copy buffers (its own are 32
// KiB, held for a stream's whole life: 320 MiB for 10,000 open streams).
// A pipe hands over one encoded event per Read, so a small buffer costs
// only more Reads for the rare large event.
type copyBuffers struct{}

var copyBufPool = sync.Pool{New: func() any { return new([4 << 10]byte) }}

func (copyBuffers) Get() []byte { return copyBufPool.Get().(*[4 << 10]byte)[:] }

func (copyBuffers) Put(b []byte) {
	if cap(b) == 4<<10 {
		copyBufPool.Put((*[4 << 10]byte)(b[:4<<10]))
	}
}
