package mcptest

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// Proxy is a forward HTTP proxy built with the standard library, for
// tests: CONNECT tunnels (https://, h2c) and absolute-form requests
// (http://), each counted, with an optional Proxy-Authorization check and
// a host map (a name in the URL reaches a loopback address, so a test can
// use a non-loopback name that the environment's proxy settings apply
// to). Safe for concurrent use.
type Proxy struct {
	// URL is http://127.0.0.1:PORT.
	URL string
	// Map sends a target host:port to another address ("" none).
	Map map[string]string
	// User and Password, when set, are required in Proxy-Authorization
	// (else 407).
	User, Password string

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	accepted int      // TCP connections accepted from clients
	tunnels  []string // CONNECT targets, one per tunnel opened
	forwards []string // absolute-form request URLs forwarded
	refused  int      // requests answered 407
	fwd      *http.Transport
	open     []net.Conn // tunnels' connections, closed by Close
}

// StartProxy starts a proxy on a free loopback port; stop it with Close.
func StartProxy() (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), ln: ln, Map: map[string]string{}}
	p.fwd = &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", p.target(addr))
	}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			p.mu.Lock()
			p.accepted++
			p.mu.Unlock()
		}
	}}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy and its tunnels.
func (p *Proxy) Close() {
	p.srv.Close()
	p.fwd.CloseIdleConnections()
	p.mu.Lock()
	open := p.open
	p.open = nil
	p.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
}

// Accepted returns the TCP connections clients opened to the proxy.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Tunnels returns the CONNECT targets, one per tunnel opened.
func (p *Proxy) Tunnels() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.tunnels...)
}

// Forwards returns the absolute-form request URLs forwarded.
func (p *Proxy) Forwards() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.forwards...)
}

// Refused returns the requests answered 407 (bad or missing
// Proxy-Authorization).
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

func (p *Proxy) target(addr string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if to := p.Map[addr]; to != "" {
		return to
	}
	return addr
}

// SetAuth makes the proxy require Basic credentials user:password
// (Proxy-Authorization); safe while it serves. Setting User and Password
// directly is only safe before the first request can arrive: a request
// from another process synchronizes with nothing in this one.
func (p *Proxy) SetAuth(user, password string) {
	p.mu.Lock()
	p.User, p.Password = user, password
	p.mu.Unlock()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	user, password := p.User, p.Password
	p.mu.Unlock()
	if user != "" && r.Header.Get("Proxy-Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)) {
		p.mu.Lock()
		p.refused++
		p.mu.Unlock()
		w.Header().Set("Proxy-Authenticate", `Basic realm="mcptest"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.forwards = append(p.forwards, r.URL.String())
	p.mu.Unlock()
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.Out.URL = r.URL; pr.Out.Header.Del("Proxy-Authorization") },
		Transport:     p.fwd,
		FlushInterval: -1, // SSE: every write goes on at once
	}
	rp.ServeHTTP(w, r)
}

// tunnel answers CONNECT: 200, then bytes both ways until either side
// closes.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	dst, err := net.DialTimeout("tcp", p.target(r.Host), 5*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	p.mu.Lock()
	p.tunnels = append(p.tunnels, r.Host)
	p.mu.Unlock()
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		dst.Close()
		return
	}
	p.mu.Lock()
	p.open = append(p.open, c, dst)
	p.mu.Unlock()
	c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() {
		if n := brw.Reader.Buffered(); n > 0 {
			b, _ := brw.Reader.Peek(n)
			dst.Write(b)
		}
		io.Copy(dst, c)
		dst.Close()
	}()
	io.Copy(c, dst)
	c.Close()
}
