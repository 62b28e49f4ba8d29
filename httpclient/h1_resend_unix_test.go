//go:build unix

package httpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hostile is a raw HTTP/1.1 server on 127.0.0.1 that plants faults. For each
// request it reads (the whole body) it counts the request's X-Req-Id and
// calls act with the request's number on its connection (from 1); act
// writes what it wants on c and returns whether to go on reading.
type hostile struct {
	url   string
	mu    sync.Mutex
	seen  map[string]int // X-Req-Id -> times the server read that request
	conns int
	done  chan struct{} // one value each time act returned false and the conn was closed
}

func newHostile(t *testing.T, act func(c net.Conn, nth int) bool) *hostile {
	t.Helper()
	return newHostileTLS(t, nil, act)
}

// newHostileTLS is newHostile over TLS with cfg (nil: plain).
func newHostileTLS(t *testing.T, cfg *tls.Config, act func(c net.Conn, nth int) bool) *hostile {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{url: "http://" + l.Addr().String(), seen: map[string]int{}, done: make(chan struct{}, 1000)}
	if cfg != nil {
		h.url = "https://" + l.Addr().String()
	}
	var wg sync.WaitGroup
	var open []net.Conn
	t.Cleanup(func() {
		l.Close()
		h.mu.Lock()
		for _, c := range open {
			c.Close() // unblocks the reads on connections the client keeps
		}
		h.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns++
			open = append(open, c)
			h.mu.Unlock()
			wg.Go(func() {
				if cfg != nil {
					c = tls.Server(c, cfg)
				}
				br := bufio.NewReader(c)
				for nth := 1; ; nth++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						c.Close()
						return
					}
					if _, err := io.Copy(io.Discard, req.Body); err != nil {
						c.Close()
						return
					}
					h.mu.Lock()
					h.seen[req.Header.Get("X-Req-Id")]++
					h.mu.Unlock()
					if !act(c, nth) {
						c.Close()
						h.done <- struct{}{}
						return
					}
				}
			})
		}
	})
	return h
}

// check asserts the server read each of the requests 1..n exactly once and
// no other, over conns connections (-1: not checked, where the client
// dropped connections before the server had to accept them).
func (h *hostile) check(t *testing.T, n, conns int) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := 1; i <= n; i++ {
		if got := h.seen[fmt.Sprint(i)]; got != 1 {
			t.Errorf("server read request %d %d times, want once", i, got)
		}
	}
	if len(h.seen) != n {
		t.Errorf("server read %d distinct requests, want %d: %v", len(h.seen), n, h.seen)
	}
	if conns >= 0 && h.conns != conns {
		t.Errorf("server accepted %d connections, want %d", h.conns, conns)
	}
}

const okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

func rawAnswer(c net.Conn) bool {
	_, err := io.WriteString(c, okAnswer)
	return err == nil
}

// rst closes c with a TCP reset.
func rst(c net.Conn) {
	c.(*net.TCPConn).SetLinger(0)
}

// dialRecorder is a Dial that keeps the client connections it opens (plain
// *net.TCPConn, so the transport's liveness check applies).
type dialRecorder struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (d *dialRecorder) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
	}
	return c, err
}

func (d *dialRecorder) last() net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[len(d.conns)-1]
}

func (d *dialRecorder) n() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// waitReadable blocks until the client socket of c has something to read
// (bytes, FIN or RST): the server's close has reached this side, so the
// next request races nothing. Bounded by a 10 s deadline.
func waitReadable(t *testing.T, c net.Conn) {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN
	})
	if err != nil {
		t.Fatalf("client socket never saw the server's close: %v", err)
	}
}

// post sends request id on tr and reads the body.
func post(tr *h1Transport, url string, id int) (string, error) {
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":`+fmt.Sprint(id)+`,"method":"tools/call"}`))
	req.Header.Set("X-Req-Id", fmt.Sprint(id))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(b), err
}

// A kept-alive connection the server closes after reading a request,
// without answering: the request fails with ErrConnClosedAfterWrite and is
// not re-sent. Each connection answers its first request and drops the
// second, so of 5 requests 2 and 4 fail.
func TestH1NoResendAfterWrite(t *testing.T) {
	for _, how := range []string{"FIN", "RST"} {
		t.Run(how, func(t *testing.T) {
			h := newHostile(t, func(c net.Conn, nth int) bool {
				if nth == 1 {
					return rawAnswer(c)
				}
				if how == "RST" {
					rst(c)
				}
				return false
			})
			d := &dialRecorder{}
			tr := &h1Transport{Dial: d.dial}
			const n = 5
			failed := 0
			for i := 1; i <= n; i++ {
				body, err := post(tr, h.url, i)
				if i%2 == 1 {
					if err != nil || body != "ok" {
						t.Fatalf("request %d: %q %v", i, body, err)
					}
					continue
				}
				if !errors.Is(err, ErrConnClosedAfterWrite) {
					t.Fatalf("request %d: %v, want ErrConnClosedAfterWrite", i, err)
				}
				if !connClosed(err) {
					t.Fatalf("request %d: %v does not keep the I/O error", i, err)
				}
				failed++
			}
			if failed != 2 {
				t.Fatalf("%d requests failed, want 2", failed)
			}
			h.check(t, n, 3)
			if d.n() != 3 || tr.Retries() != 0 {
				t.Fatalf("dials %d retries %d, want 3 and 0", d.n(), tr.Retries())
			}
		})
	}
}

// A server that closes each connection after its rawAnswer, without
// "Connection: close" (FIN, RST, TLS close_notify and FIN), or that sends
// bytes nobody asked for on an idle connection: the liveness check drops
// the connection before the next request is written, so every request
// succeeds, each reaches the server once, and nothing is retried.
func TestH1DropsDeadIdleConnection(t *testing.T) {
	for _, how := range []string{"FIN", "RST", "unsolicited", "TLS"} {
		t.Run(how, func(t *testing.T) {
			var cfg *tls.Config
			tr := &h1Transport{}
			if how == "TLS" {
				cfg = serverTLS()
				tr.TLSConfig = &tls.Config{InsecureSkipVerify: true}
			}
			poke, quit := make(chan struct{}), make(chan struct{})
			h := newHostileTLS(t, cfg, func(c net.Conn, nth int) bool {
				if !rawAnswer(c) {
					return false
				}
				switch how {
				case "RST":
					rst(c)
				case "unsolicited":
					// Once the client holds the connection idle: a 408 some
					// servers send before closing one; this one stays open.
					select {
					case <-poke:
					case <-quit:
						return false
					}
					io.WriteString(c, "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
					return true
				}
				return false
			})
			t.Cleanup(func() { close(quit) }) // runs before the server's cleanup
			d := &dialRecorder{}
			tr.Dial = d.dial
			const n = 20
			for i := 1; i <= n; i++ {
				if i > 1 {
					if how == "unsolicited" {
						poke <- struct{}{}
					}
					waitReadable(t, d.last())
				}
				if body, err := post(tr, h.url, i); err != nil || body != "ok" {
					t.Fatalf("request %d: %q %v", i, body, err)
				}
			}
			h.check(t, n, n)
			if d.n() != n || tr.Retries() != 0 {
				t.Fatalf("dials %d retries %d, want %d and 0", d.n(), tr.Retries(), n)
			}
		})
	}
}

// A healthy keep-alive server: one connection carries every request.
func TestH1KeepAliveHealthy(t *testing.T) {
	h := newHostile(t, func(c net.Conn, nth int) bool { return rawAnswer(c) })
	d := &dialRecorder{}
	tr := &h1Transport{Dial: d.dial}
	const n = 50
	for i := 1; i <= n; i++ {
		if body, err := post(tr, h.url, i); err != nil || body != "ok" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
	}
	h.check(t, n, 1)
	if d.n() != 1 || tr.Retries() != 0 {
		t.Fatalf("dials %d retries %d, want 1 and 0", d.n(), tr.Retries())
	}
}

// faultyConn fails writes on demand: the connection takes none of the
// bytes (accept 0) or only the first accept bytes of a write.
type faultyConn struct {
	net.Conn
	mu     sync.Mutex
	fail   bool
	accept int
}

func (c *faultyConn) plant(accept int) {
	c.mu.Lock()
	c.fail, c.accept = true, accept
	c.mu.Unlock()
}

func (c *faultyConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	fail, accept := c.fail, c.accept
	c.mu.Unlock()
	if !fail {
		return c.Conn.Write(p)
	}
	n, _ := c.Conn.Write(p[:min(accept, len(p))])
	return n, fmt.Errorf("write: %w", syscall.ECONNRESET)
}

// Only a request of which the connection took no byte is re-sent, once,
// and counted; one partly written fails with ErrConnClosedAfterWrite.
func TestH1RetryOnlyUnwritten(t *testing.T) {
	tests := []struct {
		name      string
		accept    int  // bytes the faulty connection takes before failing
		failAll   bool // every connection fails its writes
		wantErr   error
		wantSeen  int // requests the server read in full
		wantDials int
		wantRetry int64
		wantMsg   string
	}{
		{name: "nothing written", accept: 0, wantSeen: 2, wantDials: 2, wantRetry: 1},
		{name: "nothing written twice", accept: 0, failAll: true, wantErr: syscall.ECONNRESET, wantSeen: 1, wantDials: 2, wantRetry: 1},
		{name: "half written", accept: 40, wantErr: ErrConnClosedAfterWrite, wantSeen: 1, wantDials: 1, wantRetry: 0,
			wantMsg: "connection closed after the request was sent (not re-sent: the server may have executed it) (40 bytes of the request written): write: connection reset by peer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHostile(t, func(c net.Conn, nth int) bool { return rawAnswer(c) })
			var mu sync.Mutex
			var conns []*faultyConn
			failAll := false
			tr := &h1Transport{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				fc := &faultyConn{Conn: c}
				mu.Lock()
				if failAll {
					fc.plant(tt.accept)
				}
				conns = append(conns, fc)
				mu.Unlock()
				return fc, nil
			}}
			if body, err := post(tr, h.url, 1); err != nil || body != "ok" {
				t.Fatalf("request 1: %q %v", body, err)
			}
			mu.Lock()
			conns[0].plant(tt.accept)
			failAll = tt.failAll
			mu.Unlock()
			body, err := post(tr, h.url, 2)
			switch {
			case tt.wantErr == nil && (err != nil || body != "ok"):
				t.Fatalf("request 2: %q %v, want ok", body, err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("request 2: %v, want %v", err, tt.wantErr)
			case tt.wantErr == syscall.ECONNRESET && errors.Is(err, ErrConnClosedAfterWrite):
				t.Fatalf("request 2: %v: nothing was written, yet it says so", err)
			case tt.wantMsg != "" && err.Error() != tt.wantMsg:
				t.Fatalf("request 2: %q\nwant %q", err, tt.wantMsg)
			}
			h.check(t, tt.wantSeen, -1)
			mu.Lock()
			dials := len(conns)
			mu.Unlock()
			if dials != tt.wantDials || tr.Retries() != tt.wantRetry {
				t.Fatalf("dials %d retries %d, want %d and %d", dials, tr.Retries(), tt.wantDials, tt.wantRetry)
			}
		})
	}
}

// BenchmarkH1IdleCheck is the liveness check a pooled connection passes
// before each reuse: one MSG_PEEK recvfrom on an idle loopback socket.
func BenchmarkH1IdleCheck(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pc := newH1conn(&h1Transport{}, "", "", c)
	b.ReportAllocs()
	for b.Loop() {
		if !pc.alive() {
			b.Fatal("an idle healthy connection failed the check")
		}
	}
}
