package refserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
)

// DefaultAddr is the address Start listens on when given "": a free port on
// the IPv4 loopback interface.
const DefaultAddr = "127.0.0.1:0"

// shutdownTimeout bounds the graceful part of Close; connections still open
// after it are closed by force.
const shutdownTimeout = 3 * time.Second

// Server is a running reference server: NewHandler served at /mcp over HTTP.
// Its methods are safe for concurrent use.
type Server struct {
	h        *handler
	tls      *tlsMaterial // nil: plain HTTP
	auth     *authServer  // nil: no authorization
	srv      *http.Server
	ln       net.Listener
	served   chan error // Serve's result
	stopCtx  func() bool
	once     sync.Once
	closeErr error
}

// Start listens on addr ("" means DefaultAddr, "127.0.0.1:0") and serves
// NewHandler(opts) at /mcp until Close is called or ctx is done (cancelling
// ctx closes the server as Close does). It returns an error wrapping
// ErrInvalidOptions if opts is invalid, or the listen error.
func Start(ctx context.Context, addr string, opts Options) (*Server, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	h, err := newHandler(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{h: h, served: make(chan error, 1)}
	if opts.TLS != nil {
		if s.tls, err = newTLS(opts.TLS); err != nil {
			h.Close()
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
	}
	lc := net.ListenConfig{KeepAlive: -1} // set per connection, jittered (netutil.KeepAlive)
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		h.Close()
		return nil, err
	}
	ln = netutil.KeepAliveListener{Listener: ln}
	s.ln = ln
	mux := http.NewServeMux()
	var mcp http.Handler = h
	if opts.Auth != nil {
		s.auth = newAuthServer(*opts.Auth, strings.TrimSuffix(s.URL(), "/mcp"), unspecifiedAddr(ln.Addr()), h.origins)
		mcp = s.auth.mount(mux, h)
	}
	if opts.TLS != nil && len(opts.TLS.Hosts) > 0 {
		mcp = hostGuard(opts.TLS.Hosts, mcp)
	}
	mux.Handle("/mcp", mcp)
	errorLog := log.New(io.Discard, "", 0)
	if opts.Logger != nil {
		errorLog = slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn)
	}
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          errorLog,
		Protocols:         protocols(opts),
		// No WriteTimeout: SSE streams live as long as their request.
	}
	if s.tls != nil {
		s.srv.TLSConfig = s.tls.config
		go func() { s.served <- s.srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { s.served <- s.srv.Serve(ln) }()
	}
	s.stopCtx = context.AfterFunc(ctx, func() { s.Close() })
	return s, nil
}

// URL returns the MCP endpoint, e.g. "http://127.0.0.1:41234/mcp"
// ("https://" with TLS).
func (s *Server) URL() string {
	if s.tls != nil {
		return "https://" + s.Addr() + "/mcp"
	}
	return "http://" + s.Addr() + "/mcp"
}

// Addr returns the address the server listens on, e.g. "127.0.0.1:41234".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Loopback reports whether the server listens on a loopback address only
// (127.0.0.0/8 or ::1). A server on 0.0.0.0, :: or an interface address
// accepts connections from the network, and it has no authentication.
func (s *Server) Loopback() bool { return loopbackAddr(s.ln.Addr()) }

// unspecifiedAddr reports whether a is a wildcard address (0.0.0.0, ::):
// not one a client can be sent to.
func unspecifiedAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsUnspecified()
}

func loopbackAddr(a net.Addr) bool { return netutil.LoopbackAddr(a) }

// Stats returns the server's counters.
func (s *Server) Stats() Stats { return s.h.stats() }

// Close stops listening, ends every session (aborting running tools), and
// waits for in-flight requests a bounded time (a few seconds) before closing
// their connections by force, so it never hangs. It is idempotent; every
// call returns the same error, nil unless serving had failed.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.stopCtx()
		s.h.beginClose()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		err := s.srv.Shutdown(ctx)
		cancel()
		if err != nil {
			s.srv.Close()
		}
		s.h.waitClosed(closeWaitTimeout)
		if err := <-s.served; !errors.Is(err, http.ErrServerClosed) {
			s.closeErr = err
		}
	})
	return s.closeErr
}
