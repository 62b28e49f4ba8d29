package mcptest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Hostile servers: endpoints that misbehave the way servers in the field
// do (never answer, trickle bytes, send endless lines or huge bodies,
// garbage, redirects, auth challenges, throttling, compression, HTTP/2
// only, odd session ids), for tests and for measuring mcpbench against
// them (scripts/hostile). Each speaks just enough MCP to get to its fault;
// mcp, when given, serves the well-behaved part (a reference server's
// handler).

// HostileCases lists the cases ServeHostile knows, with what each does.
var HostileCases = map[string]string{
	"never-answers":   "accepts the connection, reads the request, never answers",
	"slowloris":       "sends the status line and then one header byte per second, forever",
	"endless-line":    "answers SSE and then one 'data:' line that never ends, one byte per write",
	"huge-json":       "answers a tools/call with a 300 MB JSON body (chunked: no Content-Length)",
	"huge-json-cl":    "the same with its Content-Length",
	"huge-sse-event":  "answers SSE with one 300 MB event",
	"garbage":         "answers every request with bytes that are not HTTP",
	"redirect-307":    "answers POST /mcp with 307 to /mcp/, where the MCP server is",
	"auth-401":        "answers 401 with WWW-Authenticate: Bearer resource_metadata=… and an OAuth error body",
	"throttle-429":    "answers every other tools/call with 429 and Retry-After: 1",
	"gzip-json":       "answers with gzip-compressed JSON (Content-Encoding: gzip)",
	"h2-only":         "TLS that offers only HTTP/2 in ALPN",
	"huge-session-id": "assigns a 2 MiB Mcp-Session-Id",
	"odd-session-id":  "assigns a session id with spaces and non-ASCII bytes",
}

// ServeHostile serves case name on addr ("127.0.0.1:0" for any port) and
// returns the MCP endpoint URL and a stop function (idempotent; it closes
// every connection). mcp serves the well-behaved parts; it may be nil for
// the cases that never get that far.
func ServeHostile(name, addr string, mcp http.Handler) (url string, stop func(), err error) {
	switch name {
	case "never-answers", "slowloris", "garbage":
		return serveRaw(name, addr)
	case "h2-only":
		srv := httptest.NewUnstartedServer(orNotFound(mcp))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", nil, err
		}
		srv.Listener = ln
		srv.EnableHTTP2 = true
		// HTTP/1 switched off: Go's server would otherwise let an HTTP/1.1
		// client through whatever ALPN says (go.dev/issue/46310).
		var protos http.Protocols
		protos.SetHTTP2(true)
		srv.Config.Protocols = &protos
		srv.TLS = &tls.Config{NextProtos: []string{"h2"}}
		srv.StartTLS()
		return srv.URL + "/mcp", srv.Close, nil
	}
	h, ok := hostileHandler(name, mcp)
	if !ok {
		return "", nil, fmt.Errorf("%w %q", ErrUnknownHostile, name)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	var once sync.Once
	return "http://" + ln.Addr().String() + "/mcp", func() { once.Do(func() { srv.Close() }) }, nil
}

func orNotFound(h http.Handler) http.Handler {
	if h == nil {
		return http.NotFoundHandler()
	}
	return h
}

// rpcMethod peeks the JSON-RPC method of a POST body (and restores it).
func rpcMethod(r *http.Request) string {
	if r.Method != http.MethodPost {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(b))
	i := bytes.Index(b, []byte(`"method":"`))
	if i < 0 {
		return ""
	}
	rest := b[i+len(`"method":"`):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return string(rest[:j])
	}
	return ""
}

// toolCall serves everything but tools/call with mcp, and tools/call with f.
func toolCall(mcp http.Handler, f http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rpcMethod(r) == "tools/call" {
			f(w, r)
			return
		}
		orNotFound(mcp).ServeHTTP(w, r)
	})
}

// hostileHandlers builds the handler of each case served by net/http
// (ServeHostile serves the raw-connection and HTTP/2 cases itself).
var hostileHandlers = map[string]func(mcp http.Handler) http.Handler{
	"endless-line":   endlessLine,
	"huge-json":      func(mcp http.Handler) http.Handler { return hugeJSON(mcp, false) },
	"huge-json-cl":   func(mcp http.Handler) http.Handler { return hugeJSON(mcp, true) },
	"huge-sse-event": hugeSSEEvent,
	"redirect-307":   redirect307,
	"auth-401":       func(http.Handler) http.Handler { return http.HandlerFunc(auth401) },
	"throttle-429":   throttle429,
	"gzip-json":      gzipJSON,
	"huge-session-id": func(mcp http.Handler) http.Handler {
		return rewriteSessionID(mcp, strings.Repeat("s", 2<<20))
	},
	"odd-session-id": func(mcp http.Handler) http.Handler {
		return rewriteSessionID(mcp, "sess ion-\xc3\xa9")
	},
}

func hostileHandler(name string, mcp http.Handler) (http.Handler, bool) {
	build, ok := hostileHandlers[name]
	if !ok {
		return nil, false
	}
	return build(mcp), true
}

// endlessLine answers tools/call with SSE and one 'data:' line that never
// ends, one byte per write (until the client goes).
func endlessLine(mcp http.Handler) http.Handler {
	return toolCall(mcp, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		io.WriteString(w, "data: ")
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	})
}

// hugeJSON answers tools/call with a 300 MB JSON body, chunked or (withCL)
// with its Content-Length.
func hugeJSON(mcp http.Handler, withCL bool) http.Handler {
	return toolCall(mcp, func(w http.ResponseWriter, r *http.Request) {
		const size = 300 << 20
		head := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`
		tail := `"}]}}`
		w.Header().Set("Content-Type", "application/json")
		if withCL {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		io.WriteString(w, head)
		writeFill(r.Context(), w, size-len(head)-len(tail))
		io.WriteString(w, tail)
	})
}

// hugeSSEEvent answers tools/call with SSE and one 300 MB event.
func hugeSSEEvent(mcp http.Handler) http.Handler {
	return toolCall(mcp, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "id: e1\ndata: ")
		writeFill(r.Context(), w, 300<<20)
		io.WriteString(w, "\n\n")
	})
}

// redirect307 answers /mcp with 307 to /mcp/, where mcp serves.
func redirect307(mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp/", http.StripPrefix("/mcp/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = "/mcp"
		orNotFound(mcp).ServeHTTP(w, r)
	})))
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/mcp/")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	return mux
}

// auth401 answers every request with 401, a Bearer challenge naming the
// protected-resource metadata, and an OAuth error body.
func auth401(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource", scope="mcp"`)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, `{"error":"invalid_token","error_description":"missing bearer token"}`)
}

// throttle429 answers every other tools/call (the 1st, 3rd, …) with 429
// and Retry-After: 1; mcp serves the rest.
func throttle429(mcp http.Handler) http.Handler {
	var mu sync.Mutex
	n := 0
	return toolCall(mcp, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		odd := n%2 == 1
		mu.Unlock()
		if odd {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, "rate limited\n")
			return
		}
		orNotFound(mcp).ServeHTTP(w, r)
	})
}

// gzipJSON serves mcp and gzips its application/json answers
// (Content-Encoding: gzip).
func gzipJSON(mcp http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		orNotFound(mcp).ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(rec.Body.Bytes())
		zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(b.Bytes())
	})
}

// rewriteSessionID serves mcp but gives clients session ids of its own,
// "<base>-<n>", mapped back to mcp's ids on later requests.
func rewriteSessionID(mcp http.Handler, base string) http.Handler {
	var mu sync.Mutex
	real := map[string]string{} // the id given → the server's own
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rpcMethod(r) == "initialize" {
			rec := httptest.NewRecorder()
			orNotFound(mcp).ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			mu.Lock()
			id := fmt.Sprintf("%s-%d", base, len(real))
			real[id] = rec.Header().Get("Mcp-Session-Id")
			mu.Unlock()
			w.Header().Set("Mcp-Session-Id", id)
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		mu.Lock()
		r.Header.Set("Mcp-Session-Id", real[r.Header.Get("Mcp-Session-Id")])
		mu.Unlock()
		orNotFound(mcp).ServeHTTP(w, r)
	})
}

// writeFill writes n bytes of 'x' in 64 KiB writes (until ctx ends).
func writeFill(ctx context.Context, w io.Writer, n int) {
	chunk := bytes.Repeat([]byte{'x'}, 64<<10)
	for n > 0 && ctx.Err() == nil {
		c := chunk[:min(n, len(chunk))]
		if _, err := w.Write(c); err != nil {
			return
		}
		n -= len(c)
	}
}

// serveRaw serves the cases that need the raw connection.
func serveRaw(name, addr string) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	done := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			go rawCase(name, c, done)
		}
	}()
	var once sync.Once
	return "http://" + ln.Addr().String() + "/mcp", func() {
		once.Do(func() {
			close(done)
			ln.Close()
			mu.Lock()
			for c := range conns {
				c.Close()
			}
			mu.Unlock()
		})
	}, nil
}

func rawCase(name string, c net.Conn, done <-chan struct{}) {
	defer c.Close()
	br := bufio.NewReader(c)
	// Read the request head (the body is small and ignored).
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if line == "\r\n" || line == "\n" {
			break
		}
	}
	switch name {
	case "never-answers":
		<-done
	case "slowloris":
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if _, err := c.Write([]byte{'X'}); err != nil {
					return
				}
			}
		}
	case "garbage":
		c.Write([]byte("\x00\x17\xfeNOT HTTP AT ALL \xff\xfe garbage garbage\r\n\r\n"))
	}
}

// ErrUnknownHostile is returned for an unknown case name.
var ErrUnknownHostile = errors.New("hostile: unknown case")
