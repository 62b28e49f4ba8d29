package httpclient

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// A header line longer than the read buffer (8 KiB) is fine within the
// head limit.
func TestH1LongHeaderLine(t *testing.T) {
	big := strings.Repeat("a", 100<<10)
	url, conns := rawServer(t, func(*http.Request) string {
		return "HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nContent-Length: 2\r\n\r\nok"
	})
	tr := &h1Transport{}
	for i := range 3 {
		resp, body, err := get(t, tr, url)
		if err != nil || body != "ok" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
		if resp.Header.Get("X-Big") != big {
			t.Fatalf("X-Big has %d bytes, want %d", len(resp.Header.Get("X-Big")), len(big))
		}
	}
	if conns.Load() != 1 {
		t.Fatalf("connections %d, want 1", conns.Load())
	}
}

// Each malformed answer fails with a message naming the part at fault and
// a quoted excerpt: printable, at most 64 bytes of the input.
func TestH1ErrorsSayWhat(t *testing.T) {
	const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	mib := strings.Repeat("a", 1<<20+100)
	var many strings.Builder // 8010 bytes per header line: X-H130 crosses 1 MiB
	many.WriteString("HTTP/1.1 200 OK\r\n")
	for i := range 200 {
		fmt.Fprintf(&many, "X-H%03d: %s\r\n", i, strings.Repeat("a", 8000))
	}
	many.WriteString("\r\n")
	tests := []struct {
		name, raw, want string
		is              error
	}{
		{"header over the head limit", "HTTP/1.1 200 OK\r\nX-Big: " + mib + "\r\n\r\n",
			`response header "X-Big" makes the response head larger than 1 MiB`, errH1},
		{"headers add up over the limit", many.String(),
			`response header "X-H130" makes the response head larger than 1 MiB`, errH1},
		{"status line over the limit", "HTTP/1.1 200 " + mib + "\r\n\r\n",
			`status line "HTTP/1.1 200 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"... makes the response head larger than 1 MiB`, errH1},
		{"status line binary", "\x15\x03\x01\x00\x02\x02\x46",
			`status line "\x15\x03\x01\x00\x02\x02F": not HTTP/1.x`, errH1},
		{"status line html", "<html>hello</html>\r\n\r\n", `status line "<html>hello</html>": not HTTP/1.x`, errH1},
		{"status code", "HTTP/1.1 2x0 OK\r\n\r\n", `status line "HTTP/1.1 2x0 OK": no status code`, errH1},
		{"status line cut", "HTTP/1.1 200", `status line "HTTP/1.1 200" cut short: unexpected EOF`, io.ErrUnexpectedEOF},
		{"head cut", "HTTP/1.1 200 OK\r\nX-A: 1\r\n", `response head cut short: unexpected EOF`, io.ErrUnexpectedEOF},
		{"header line", "HTTP/1.1 200 OK\r\nbroken header\r\n\r\n", `header line "broken header"`, errH1},
		{"chunk size not hex", chunked + "zz\r\n", `chunk size "zz": not hexadecimal`, errH1},
		{"chunk size negative", chunked + "-5\r\n", `chunk size "-5": negative`, errH1},
		{"chunk size overflow", chunked + "10000000000000000\r\n", `chunk size "10000000000000000": larger than 2^63-1`, errH1},
		{"chunk size empty", chunked + "\r\n", `chunk size "": empty`, errH1},
		{"chunk size line too long", chunked + strings.Repeat("1", 5000) + "\r\n",
			`chunk size line "` + strings.Repeat("1", 64) + `"... longer than 4096 bytes`, errH1},
		{"chunk size line cut", chunked + "5\r\nhello\r\n1", `reading chunk size: line "1" cut short: unexpected EOF`, io.ErrUnexpectedEOF},
		{"chunk size missing", chunked + "5\r\nhello\r\n", `reading chunk size: unexpected EOF`, io.ErrUnexpectedEOF},
		{"chunk without CRLF", chunked + "5\r\nhelloXX\r\n", `chunk data not followed by CRLF but "XX"`, errH1},
		{"trailer line", chunked + "0\r\nbroken\r\n\r\n", `trailer line "broken"`, errH1},
		{"trailer over the limit", chunked + "0\r\nX-T: " + mib + "\r\n\r\n", `trailer "X-T" makes the trailers larger than 1 MiB`, errH1},
		{"trailer cut", chunked + "0\r\nX-T: 1\r\n", `reading trailer: unexpected EOF`, io.ErrUnexpectedEOF},
		{"HTTP/2 SETTINGS", "\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64", "answered with an HTTP/2 SETTINGS frame", ErrHTTP2Only},
		{"HTTP/2 empty SETTINGS", "\x00\x00\x00\x04\x00\x00\x00\x00\x00", "answered with an HTTP/2 SETTINGS frame", ErrHTTP2Only},
		{"HTTP/2 GOAWAY", "\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", "answered with an HTTP/2 GOAWAY frame", ErrHTTP2Only},
		{"HTTP/2 preface", h2Preface, "answered with the HTTP/2 connection preface", ErrHTTP2Only},
		{"not HTTP/2: a DATA frame", "\x00\x00\x01\x00\x00\x00\x00\x00\x01x", `status line "\x00\x00\x01\x00\x00\x00\x00\x00\x01x": not HTTP/1.x`, errH1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := rawServerOnce(t, tt.raw)
			_, _, err := get(t, &h1Transport{}, url)
			if !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want %v", err, tt.is)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Fatalf("error %q\nwant it to contain %q", msg, tt.want)
			}
			if strings.Contains(msg, "header line too long") {
				t.Fatalf("error %q blames a header line", msg)
			}
			if i := strings.IndexFunc(msg, func(r rune) bool { return r < ' ' || r > '~' }); i >= 0 {
				t.Fatalf("error %q has a raw byte at %d", msg, i)
			}
			if len(msg) > 400 {
				t.Fatalf("error has %d bytes", len(msg))
			}
		})
	}
}

// An HTTP/2-only Go server (http.Protocols without HTTP/1) completes the
// handshake with an HTTP/1.1-only client, negotiating no protocol (Go's
// fallback, go.dev/issue/46310), then drops the connection: the probe with
// ALPN h2 turns that into ErrHTTP2Only.
func TestH1HTTP2OnlyGoServer(t *testing.T) {
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("h2 answer"))
	}))
	ts.EnableHTTP2 = true
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetHTTP2(true)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.StartTLS()
	defer ts.Close()
	tr := &h1Transport{TLSConfig: &tls.Config{InsecureSkipVerify: true}}
	_, _, err := get(t, tr, ts.URL)
	if !errors.Is(err, ErrHTTP2Only) {
		t.Fatalf("error %v, want ErrHTTP2Only", err)
	}
	// One connection for the request (two if it was refused before any
	// byte of it was written, then re-sent) and one for the probe.
	if want := 2 + tr.Retries(); conns.Load() != want {
		t.Fatalf("server saw %d connections, want %d (retries %d)", conns.Load(), want, tr.Retries())
	}
}

// A Go server whose TLS config offers only ALPN h2 but serves HTTP/1.1 too
// (the same fallback) works: no false ErrHTTP2Only.
func TestH1HTTP2PreferringServerStillWorks(t *testing.T) {
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Proto))
	}))
	ts.EnableHTTP2 = true
	ts.TLS = &tls.Config{NextProtos: []string{"h2"}}
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.StartTLS()
	defer ts.Close()
	tr := &h1Transport{TLSConfig: &tls.Config{InsecureSkipVerify: true}}
	for i := range 3 {
		if _, body, err := get(t, tr, ts.URL); err != nil || body != "HTTP/1.1" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
	}
	if conns.Load() != 1 || tr.Retries() != 0 {
		t.Fatalf("connections %d retries %d, want 1 and 0", conns.Load(), tr.Retries())
	}
}

// serverTLS returns a server TLS config with httptest's certificate.
func serverTLS() *tls.Config {
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS() // only for its certificate
	defer ts.Close()
	return &tls.Config{Certificates: ts.TLS.Certificates}
}

// alpnServer is a raw TLS server that, like rustls or a strict OpenSSL
// one, answers a ClientHello without an ALPN protocol it speaks with a
// fatal no_application_protocol alert (RFC 7301 §3.2). With h2 true it
// completes a handshake offering h2.
type alpnServer struct {
	url    string
	alerts atomic.Int64 // ClientHellos answered with the alert
	h2     atomic.Int64 // ClientHellos answered with an h2 handshake
}

func newALPNServer(t *testing.T, h2 bool) *alpnServer {
	t.Helper()
	cfg := serverTLS()
	cfg.NextProtos = []string{"h2"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &alpnServer{url: "https://" + l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				hello, protos, err := readClientHello(c)
				if err != nil {
					return
				}
				if !h2 || !slices.Contains(protos, "h2") {
					s.alerts.Add(1)
					c.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 120}) // fatal no_application_protocol
					return
				}
				s.h2.Add(1)
				tc := tls.Server(&replayConn{Conn: c, r: io.MultiReader(bytes.NewReader(hello), c)}, cfg)
				if tc.Handshake() == nil {
					io.Copy(io.Discard, tc) // until the client closes
				}
			})
		}
	})
	return s
}

type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// readClientHello reads the first TLS record (a ClientHello) and returns
// it with the ALPN protocols it offers.
func readClientHello(c net.Conn) ([]byte, []string, error) {
	br := bufio.NewReader(c)
	hdr, err := br.Peek(5)
	if err != nil || hdr[0] != 0x16 {
		return nil, nil, errors.New("not a handshake record")
	}
	rec := make([]byte, 5+(int(hdr[3])<<8|int(hdr[4])))
	if _, err := io.ReadFull(br, rec); err != nil {
		return nil, nil, err
	}
	// record header 5, handshake header 4, version 2, random 32
	p := rec[5+4+2+32:]
	skip := func(lenBytes int) bool {
		if len(p) < lenBytes {
			return false
		}
		n := 0
		for _, b := range p[:lenBytes] {
			n = n<<8 | int(b)
		}
		if len(p) < lenBytes+n {
			return false
		}
		p = p[lenBytes+n:]
		return true
	}
	if !skip(1) || !skip(2) || !skip(1) || len(p) < 2 { // session id, cipher suites, compression
		return nil, nil, errors.New("short ClientHello")
	}
	p = p[2:] // extensions length
	var protos []string
	for len(p) >= 4 {
		typ, n := int(p[0])<<8|int(p[1]), int(p[2])<<8|int(p[3])
		if len(p) < 4+n {
			break
		}
		if typ == 16 && n >= 2 { // application_layer_protocol_negotiation
			for l := p[6 : 4+n]; len(l) > 0 && len(l) > int(l[0]); l = l[1+int(l[0]):] {
				protos = append(protos, string(l[1:1+int(l[0])]))
			}
		}
		p = p[4+n:]
	}
	return rec, protos, nil
}

// A server that refuses ALPN http/1.1 with no_application_protocol but
// accepts h2 is ErrHTTP2Only, after exactly one probe.
func TestH1HTTP2OnlyALPNAlert(t *testing.T) {
	s := newALPNServer(t, true)
	tr := &h1Transport{TLSConfig: &tls.Config{InsecureSkipVerify: true}}
	_, _, err := get(t, tr, s.url)
	if !errors.Is(err, ErrHTTP2Only) {
		t.Fatalf("error %v, want ErrHTTP2Only", err)
	}
	if s.alerts.Load() != 1 || s.h2.Load() != 1 {
		t.Fatalf("alerts %d, h2 handshakes %d; want 1 and 1", s.alerts.Load(), s.h2.Load())
	}
}

// A server that refuses every protocol keeps its own TLS error.
func TestH1ALPNAlertNotHTTP2(t *testing.T) {
	s := newALPNServer(t, false)
	tr := &h1Transport{TLSConfig: &tls.Config{InsecureSkipVerify: true}}
	_, _, err := get(t, tr, s.url)
	if err == nil || errors.Is(err, ErrHTTP2Only) || !strings.Contains(err.Error(), "no application protocol") {
		t.Fatalf("error %v, want the server's no_application_protocol alert", err)
	}
	if s.alerts.Load() != 2 || s.h2.Load() != 0 {
		t.Fatalf("alerts %d, h2 handshakes %d; want 2 (request, probe) and 0", s.alerts.Load(), s.h2.Load())
	}
}
