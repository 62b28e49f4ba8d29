package proxy_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/proxy"
	"github.com/mcpbench/mcpbench/refserver"
)

// Issue 34 item 6: the proxy's verdict on a client judged a check only
// when the fault it needs was planted and the client's reaction shows on
// the wire; else n/a with the reason. Faults whose effect on the client
// the proxy cannot see are listed as planted, not observable here.

// A resume of a stream that carried no retry hint (the reference server
// sends none on POST streams) says nothing about honouring one: n/a with
// the reason. It read "retry_hint pass". With a hint planted (retry
// retry=400) the same client's resume is judged: pass.
func TestJudgeRetryHintOnlyWhenSent(t *testing.T) {
	t.Parallel()
	r := goSDKThrough(t, refserver.Options{}, "cut after=2 target=tools/call")
	v := r.verdicts
	if r.callErr != nil || v.ResumesRightID != 1 || v.ResumesHinted != 0 || v.Checks["retry_hint"] != "n/a" ||
		!strings.Contains(v.NotApplicable["retry_hint"], "no resumed stream carried a retry hint") {
		t.Fatalf("no hint sent: call error %v, verdicts %s", r.callErr, verdictJSON(v))
	}
	if v.Checks["resume_last_event_id"] != "pass" || v.Checks["no_resend"] != "pass" || v.CallsBroken != 1 {
		t.Fatalf("the resume itself: %s", verdictJSON(v))
	}
	r = goSDKThrough(t, refserver.Options{}, "cut after=2 target=tools/call", "retry retry=400")
	if v := r.verdicts; r.callErr != nil || v.ResumesRightID != 1 || v.ResumesHinted != 1 || v.ResumesEarly != 0 || v.Checks["retry_hint"] != "pass" || v.NotApplicable["retry_hint"] != "" {
		t.Fatalf("hint sent: call error %v, verdicts %s", r.callErr, verdictJSON(v))
	}
}

// Planted duplicates, drops and swaps reach the client's application:
// the proxy cannot see what it did with them. They are listed as planted,
// not observable, exactly as planted; no check reads pass for them (the
// stream checks are n/a: nothing broke); delete_at_end is still judged.
func TestJudgeEventFaultsNotObservable(t *testing.T) {
	for _, tt := range []struct {
		spec string
		kind proxy.Kind
	}{
		{"duplicate target=progress", proxy.KindDuplicate},
		{"drop target=progress", proxy.KindDrop},
		{"swap target=progress", proxy.KindSwap},
	} {
		t.Run(string(tt.kind), func(t *testing.T) {
			t.Parallel()
			r := goSDKThrough(t, refserver.Options{}, tt.spec)
			v := r.verdicts
			if r.planted[tt.kind] != 1 || len(v.NotObservable) != 1 || v.NotObservable[tt.kind] != 1 {
				t.Fatalf("planted %v, not observable %v: want exactly {%s: 1}", r.planted, v.NotObservable, tt.kind)
			}
			want := map[string]string{"resume_last_event_id": "n/a", "retry_hint": "n/a", "no_resend": "n/a", "reinitialize_after_404": "n/a", "delete_at_end": "pass"}
			for k, w := range want {
				if v.Checks[k] != w || (w == "n/a") != (v.NotApplicable[k] != "") {
					t.Fatalf("check %s: %q (why %q), want %s: %s", k, v.Checks[k], v.NotApplicable[k], w, verdictJSON(v))
				}
			}
			if l := v.NotObservableLine(); !strings.Contains(l, "planted, not observable here: "+string(tt.kind)+" 1 ") {
				t.Fatalf("line %q", l)
			}
		})
	}
	// A fault-free run: nothing planted, nothing listed.
	r := goSDKThrough(t, refserver.Options{})
	if v := r.verdicts; len(v.NotObservable) != 0 || v.NotObservableLine() != "" || v.Checks["delete_at_end"] != "pass" || v.Checks["retry_hint"] != "n/a" {
		t.Fatalf("clean run: %s", verdictJSON(v))
	}
}

// rawClient speaks MCP by hand through the proxy, so a test can send
// exactly the requests a client under test would.
type rawClient struct {
	t        *testing.T
	url      string
	session  string
	name     string       // clientInfo.name ("raw" if empty)
	hc       *http.Client // nil: http.DefaultClient
	upstream string       // the server's URL, to reach it without the proxy
}

// another is a second client of the same proxy with its own connection
// (its own transport) and clientInfo.name name.
func (c *rawClient) another(name string) *rawClient {
	tr := &http.Transport{}
	c.t.Cleanup(tr.CloseIdleConnections)
	return &rawClient{t: c.t, url: c.url, name: name, hc: &http.Client{Transport: tr}, upstream: c.upstream}
}

func (c *rawClient) do(method, body string) int {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.t.Context(), method, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	hc := c.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	return resp.StatusCode
}

func (c *rawClient) initialize() {
	c.t.Helper()
	c.session = ""
	name := c.name
	if name == "" {
		name = "raw"
	}
	if st := c.do("POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+name+`","version":"0"}}}`); st != 200 {
		c.t.Fatalf("initialize: %d", st)
	}
	c.do("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// rawThrough starts the reference server and a proxy planting specs in
// front of it, and returns a raw client of the proxy and the proxy.
func rawThrough(t *testing.T, specs ...string) (*rawClient, *proxy.Proxy) {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	up, _ := url.Parse(srv.URL())
	var faults []proxy.Fault
	for _, s := range specs {
		f, err := proxy.ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	px, err := proxy.New(proxy.Config{Upstream: up, Faults: faults, Seed: 1, Log: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: px}
	go hs.Serve(ln)
	t.Cleanup(func() { px.Close(); hs.Close() })
	return &rawClient{t: t, url: "http://" + ln.Addr().String() + up.Path, upstream: srv.URL()}, px
}

const callEcho = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`

// After a planted 404, the client's own DELETE of that session is its
// clean-up, allowed: counted apart, not as "a request on a 404'd
// session" (it was, and reinitialize_after_404 failed a client that
// re-initialized). A request other than DELETE on it still counts.
func TestJudgeDeleteAfter404Allowed(t *testing.T) {
	t.Parallel()
	c, px := rawThrough(t, "status code=404 target=tools/call")
	c.initialize()
	if st := c.do("POST", callEcho); st != http.StatusNotFound {
		t.Fatalf("the planted 404: got %d", st)
	}
	c.do("DELETE", "")
	c.initialize()
	v := px.Verdicts()
	if v.Planted404 != 1 || v.DeletedAfter404 != 1 || v.DeadSessionUsed != 0 || v.Reinitialized != 1 || v.Checks["reinitialize_after_404"] != "pass" {
		t.Fatalf("DELETE then initialize after a 404: %s", verdictJSON(v))
	}

	// The same client, but it pings the session it was told is gone.
	c, px = rawThrough(t, "status code=404 target=tools/call")
	c.initialize()
	c.do("POST", callEcho)
	c.do("POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	c.do("DELETE", "")
	c.initialize()
	v = px.Verdicts()
	if v.Planted404 != 1 || v.DeletedAfter404 != 1 || v.DeadSessionUsed != 1 || v.Reinitialized != 1 || v.Checks["reinitialize_after_404"] != "fail" {
		t.Fatalf("a ping on the 404'd session: %s", verdictJSON(v))
	}
}

// A planted 429 or 503: the client's back-off is not judged (no check
// reads it): listed as planted, not observable, apart from the 404s.
func TestJudgeStatusNot404NotObservable(t *testing.T) {
	t.Parallel()
	c, px := rawThrough(t, "status code=503 retry_after=1 target=tools/call")
	c.initialize()
	if st := c.do("POST", callEcho); st != http.StatusServiceUnavailable {
		t.Fatalf("the planted 503: got %d", st)
	}
	c.do("DELETE", "")
	v := px.Verdicts()
	if v.Planted404 != 0 || len(v.NotObservable) != 1 || v.NotObservable[proxy.KindStatus] != 1 || v.Checks["reinitialize_after_404"] != "n/a" || v.Checks["delete_at_end"] != "pass" {
		t.Fatalf("a planted 503: %s", verdictJSON(v))
	}
}

// Issue 34 item 6, after review: a session a 404 ended needs no DELETE.
// delete_at_end judges the sessions still live at the end only: a client
// that re-initialized after 3 planted 404s and deleted its one live
// session passes (it failed: "1 of 4 sessions deleted"); a second client
// that leaves its live session undeleted still fails the check.
func TestJudgeDeleteAtEndLeavesOut404dSessions(t *testing.T) {
	t.Parallel()
	c, px := rawThrough(t, "status code=404 target=tools/call")
	c.initialize()
	for range 3 {
		if st := c.do("POST", callEcho); st != http.StatusNotFound {
			t.Fatalf("the planted 404: got %d", st)
		}
		c.initialize()
	}
	c.do("DELETE", "")
	v := px.Verdicts()
	if v.SessionsOpened != 4 || v.Planted404 != 3 || v.Sessions404 != 3 || v.SessionsEnded404 != 3 || v.SessionsDeleted != 1 ||
		v.Reinitialized != 3 || v.Checks["delete_at_end"] != "pass" || v.Checks["reinitialize_after_404"] != "pass" ||
		v.Details["delete_at_end"] != "1 of 1 sessions still live deleted; 3 sessions ended by a 404 (planted or the server's) need no DELETE and are not counted" {
		t.Fatalf("3 sessions 404'd, the live one deleted: %s", verdictJSON(v))
	}

	d := c.another("second")
	d.initialize()
	v = px.Verdicts()
	if v.SessionsOpened != 5 || v.SessionsDeleted != 1 || v.SessionsEnded404 != 3 || v.Checks["delete_at_end"] != "fail" ||
		v.Details["delete_at_end"] != "1 of 2 sessions still live deleted; 3 sessions ended by a 404 (planted or the server's) need no DELETE and are not counted" {
		t.Fatalf("a second client left its live session: %s", verdictJSON(v))
	}
	d.do("DELETE", "")
	if v = px.Verdicts(); v.Checks["delete_at_end"] != "pass" || v.SessionsDeleted != 2 {
		t.Fatalf("both live sessions deleted: %s", verdictJSON(v))
	}
}

// Every session a 404 ended, nothing live left: delete_at_end n/a. A
// DELETE of a 404'd session is counted (deleted anyway), not owed.
func TestJudgeDeleteAtEndAllSessions404d(t *testing.T) {
	t.Parallel()
	c, px := rawThrough(t, "status code=404 target=tools/call")
	c.initialize()
	c.do("POST", callEcho)
	v := px.Verdicts()
	if v.Checks["delete_at_end"] != "n/a" || v.NotApplicable["delete_at_end"] != "every session opened (1) was ended by a 404: none was left for the client to DELETE" {
		t.Fatalf("the only session 404'd: %s", verdictJSON(v))
	}
	c.do("DELETE", "")
	c.initialize()
	c.do("DELETE", "")
	v = px.Verdicts()
	if v.Checks["delete_at_end"] != "pass" || v.SessionsDeleted != 2 || v.DeletedAfter404 != 1 ||
		v.Details["delete_at_end"] != "1 of 1 sessions still live deleted; 1 sessions ended by a 404 (planted or the server's) need no DELETE and are not counted (1 of them deleted anyway)" {
		t.Fatalf("the 404'd one deleted too: %s", verdictJSON(v))
	}
}

// An initialize carries no session id: it is attributed to a 404'd
// session of a client of the same identity (User-Agent, clientInfo),
// preferring the one answered 404 on the same connection. Before, any
// client's initialize cleared an arbitrary 404'd session and passed the
// check for a client that never re-initialized.
func TestJudgeReinitAttributedToItsClient(t *testing.T) {
	t.Run("only one of two re-initializes", func(t *testing.T) {
		t.Parallel()
		c, px := rawThrough(t, "status code=404 target=tools/call")
		alpha, beta := c.another("alpha"), c.another("beta")
		alpha.initialize()
		beta.initialize()
		alpha.do("POST", callEcho)
		beta.do("POST", callEcho)
		alpha.initialize()
		v := px.Verdicts()
		if v.Planted404 != 2 || v.Sessions404 != 2 || v.Reinitialized != 1 || v.ReinitializedAmbiguous != 0 || v.NotReinitialized != 1 ||
			v.DeadSessionUsed != 0 || v.Checks["reinitialize_after_404"] != "fail" ||
			v.Details["reinitialize_after_404"] != "1 of 2 sessions that met a planted 404 re-initialized by their client; 1 not (no initialize from a client of the same identity followed: it did not start a new session, or it stopped right after its 404)" {
			t.Fatalf("alpha re-initialized, beta did not: %s", verdictJSON(v))
		}
		beta.initialize()
		if v = px.Verdicts(); v.Reinitialized != 2 || v.NotReinitialized != 0 || v.Checks["reinitialize_after_404"] != "pass" {
			t.Fatalf("then beta re-initialized: %s", verdictJSON(v))
		}
	})
	t.Run("a client that lost nothing opens a session", func(t *testing.T) {
		t.Parallel()
		c, px := rawThrough(t, "status code=404 target=tools/call")
		alpha, beta := c.another("alpha"), c.another("beta")
		beta.initialize()
		beta.do("POST", callEcho)
		alpha.initialize() // alpha's first session: not beta's re-initialization
		v := px.Verdicts()
		if v.Reinitialized != 0 || v.NotReinitialized != 1 || v.Checks["reinitialize_after_404"] != "fail" {
			t.Fatalf("only alpha initialized after beta's 404: %s", verdictJSON(v))
		}
	})
	t.Run("same identity, told apart by connection", func(t *testing.T) {
		t.Parallel()
		c, px := rawThrough(t, "status code=404 target=tools/call")
		a, b := c.another("twin"), c.another("twin")
		a.initialize()
		b.initialize()
		b.do("POST", callEcho) // b's session is lost first
		a.do("POST", callEcho)
		lostA := a.session
		a.initialize() // on a's connection: a's session, not the first lost
		b.initialize() // on b's: b's
		v := px.Verdicts()
		if v.Reinitialized != 2 || v.ReinitializedAmbiguous != 0 || v.NotReinitialized != 0 || v.Checks["reinitialize_after_404"] != "pass" {
			t.Fatalf("each twin re-initialized on its own connection: %s", verdictJSON(v))
		}
		// The old session's id after the re-initialization is still a use
		// of a 404'd session.
		a.session = lostA
		a.do("POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		if v = px.Verdicts(); v.DeadSessionUsed != 1 || v.Checks["reinitialize_after_404"] != "fail" {
			t.Fatalf("a pinged its 404'd session after re-initializing: %s", verdictJSON(v))
		}
	})
	t.Run("same identity, one shared connection: ambiguous", func(t *testing.T) {
		t.Parallel()
		c, px := rawThrough(t, "status code=404 target=tools/call")
		a := c.another("twin")
		b := &rawClient{t: t, url: a.url, name: "twin", hc: a.hc} // one transport: one connection, used in turn
		a.initialize()
		b.initialize()
		a.do("POST", callEcho)
		b.do("POST", callEcho)
		a.initialize()
		v := px.Verdicts()
		if v.Reinitialized != 1 || v.ReinitializedAmbiguous != 1 || v.NotReinitialized != 1 || v.Checks["reinitialize_after_404"] != "fail" {
			t.Fatalf("one of two twins on one connection re-initialized: %s", verdictJSON(v))
		}
	})
	t.Run("same identity, new connection: ambiguous", func(t *testing.T) {
		t.Parallel()
		c, px := rawThrough(t, "status code=404 target=tools/call")
		a, b := c.another("twin"), c.another("twin")
		a.initialize()
		b.initialize()
		b.do("POST", callEcho)
		a.do("POST", callEcho)
		a.hc.Transport.(*http.Transport).CloseIdleConnections()
		a.initialize() // a new connection: one of the two twins, which is not on the wire
		v := px.Verdicts()
		if v.Reinitialized != 1 || v.ReinitializedAmbiguous != 1 || v.NotReinitialized != 1 ||
			!strings.Contains(v.Details["reinitialize_after_404"], "1 of 2 sessions that met a planted 404 re-initialized by their client (1 ambiguous: several clients of that identity had lost a session, sharing the initialize's connection or none on it, and the wire does not show which of them re-initialized, only how many); 1 not") {
			t.Fatalf("a re-initialized on a new connection: %s", verdictJSON(v))
		}
	})
}

// A session the server itself ended (here: deleted behind the client's
// back, so the server answers its next request 404) needs no DELETE
// either: left out of delete_at_end, like a planted 404's.
func TestJudgeDeleteAtEndServer404(t *testing.T) {
	t.Parallel()
	c, px := rawThrough(t)
	c.initialize()
	behind := &rawClient{t: t, url: c.upstream, session: c.session}
	behind.do("DELETE", "") // straight to the server: the proxy does not see it
	if st := c.do("POST", callEcho); st != http.StatusNotFound {
		t.Fatalf("the server's 404 for its ended session: got %d", st)
	}
	c.initialize()
	c.do("DELETE", "")
	v := px.Verdicts()
	if v.Planted404 != 0 || v.SessionsOpened != 2 || v.SessionsDeleted != 1 || v.SessionsEnded404 != 1 || v.Checks["delete_at_end"] != "pass" ||
		v.Details["delete_at_end"] != "1 of 1 sessions still live deleted; 1 sessions ended by a 404 (planted or the server's) need no DELETE and are not counted" ||
		v.Checks["reinitialize_after_404"] != "n/a" {
		t.Fatalf("one session the server ended, one deleted: %s", verdictJSON(v))
	}
}
