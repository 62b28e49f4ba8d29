package httpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer answers every connection with the given raw bytes per request.
func rawServer(t *testing.T, answer func(req *http.Request) string) (string, *atomic.Int64) {
	t.Helper()
	return serveRaw(t, answer, false)
}

// serveRaw serves raw HTTP/1.1 answers; once closes each connection after
// its first answer. It returns the URL and the count of connections.
func serveRaw(t *testing.T, answer func(req *http.Request) string, once bool) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conns := &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					a := answer(req)
					if a == "" {
						return
					}
					if _, err := io.WriteString(c, a); err != nil || once {
						return
					}
				}
			}()
		}
	}()
	return "http://" + l.Addr().String(), conns
}

func get(t *testing.T, tr *h1Transport, url string) (*http.Response, string, error) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{"x":1}`))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

func TestH1Bodies(t *testing.T) {
	tests := []struct {
		name, raw, body string
		reused          bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", true},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n", "hello world", true},
		{"empty", "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", "", true},
		{"204", "HTTP/1.1 204 No Content\r\n\r\n", "", true},
		{"1xx first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", true},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", "ok", false},
		{"until close", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: x\n\n", "data: x\n\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, conns := rawServer(t, func(*http.Request) string { return tt.raw })
			if !tt.reused {
				url, conns = rawServerOnce(t, tt.raw) // these servers close after the answer
			}
			tr := &h1Transport{}
			for i := range 3 {
				resp, body, err := get(t, tr, url)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if body != tt.body {
					t.Fatalf("body %q, want %q", body, tt.body)
				}
				if resp.StatusCode < 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
			}
			want := int64(3)
			if tt.reused {
				want = 1
			}
			if got := conns.Load(); got != want {
				t.Fatalf("connections %d, want %d", got, want)
			}
		})
	}
}

// rawServerOnce answers one request per connection and closes it.
func rawServerOnce(t *testing.T, raw string) (string, *atomic.Int64) {
	t.Helper()
	return serveRaw(t, func(*http.Request) string { return raw }, true)
}

func TestH1Malformed(t *testing.T) {
	for _, raw := range []string{
		"<html>hello</html>\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nbroken header\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 2<<20) + "\r\n\r\n",
	} {
		url, _ := rawServerOnce(t, raw)
		if _, _, err := get(t, &h1Transport{}, url); err == nil {
			t.Errorf("%.40q: no error", raw)
		}
	}
	// A chunked body cut short is an unexpected EOF, not a clean end.
	url, _ := rawServerOnce(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
	if _, _, err := get(t, &h1Transport{}, url); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut chunked body: %v, want unexpected EOF", err)
	}
}

// Cancelling the context or closing the body aborts a blocked read.
func TestH1AbortBlockedRead(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: first\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	tr := &h1Transport{}
	for _, how := range []string{"cancel", "close"} {
		ctx, cancel := context.WithCancelCause(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		n, err := resp.Body.Read(buf)
		if err != nil || string(buf[:n]) != "data: first\n\n" {
			t.Fatalf("first read %q %v", buf[:n], err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := resp.Body.Read(buf)
			errc <- err
		}()
		boom := errors.New("stop now")
		if how == "cancel" {
			cancel(boom)
		} else {
			resp.Body.Close()
		}
		select {
		case err := <-errc:
			if how == "cancel" && !errors.Is(err, boom) {
				t.Fatalf("cancel: read err %v, want the context's cause", err)
			}
			if how == "close" && err == nil {
				t.Fatal("close: read succeeded")
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not unblock the read", how)
		}
		cancel(nil)
	}
}

func TestH1TLS(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("secure"))
	}))
	defer ts.Close()
	tr := &h1Transport{TLSConfig: &tls.Config{InsecureSkipVerify: true}}
	if _, body, err := get(t, tr, ts.URL); err != nil || body != "secure" {
		t.Fatalf("%q %v", body, err)
	}
	if _, _, err := get(t, &h1Transport{}, ts.URL); err == nil {
		t.Fatal("an untrusted certificate must fail without InsecureSkipVerify")
	}
}

// FuzzH1Response feeds arbitrary bytes as a server's answer: the transport
// must return an error or a body that reads to an end, never panic or hang,
// and its errors quote the answer only escaped and cut short.
func FuzzH1Response(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nbody",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
		"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64",
		h2Preface,
		"\xd0\xb6\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		client, server := net.Pipe()
		go func() {
			br := bufio.NewReader(server)
			if req, err := http.ReadRequest(br); err == nil {
				io.Copy(io.Discard, req.Body)
				io.WriteString(server, raw)
			}
			server.Close()
		}()
		tr := &h1Transport{Dial: func(context.Context, string, string) (net.Conn, error) { return client, nil }}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://fuzz/mcp", strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			t.Fatalf("hung on %q", raw)
		}
		if err != nil {
			msg := err.Error()
			if i := strings.IndexFunc(msg, func(r rune) bool { return r < ' ' || r > '~' }); i >= 0 || len(msg) > 600 {
				t.Fatalf("error message with a raw byte or too long (%d bytes): %q", len(msg), msg)
			}
		}
	})
}
