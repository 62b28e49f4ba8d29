package live

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves a Prometheus sink's metrics (and the Go and process
// collectors) at /metrics on one address while a run goes. Safe for
// concurrent use.
type Server struct {
	Sink *Prometheus
	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu       sync.Mutex
	endedAt  time.Time     // when the run ended (zero: still going)
	scraped  chan struct{} // closed by the first scrape served after endedAt
	scrapeOK bool
}

// Serve listens on addr ("127.0.0.1:9464", ":9464") and serves /metrics
// in the Prometheus text, OpenMetrics and protobuf formats (protobuf
// carries the native histograms). A request with an Origin header other
// than the server's own, or one that reaches a loopback address with a
// Host that is not a loopback name, gets 403 (netutil.Guard: DNS
// rebinding protection, as mcpbench serve). The error names the address.
func Serve(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", setting.LiveServeAddr, addr, err)
	}
	s := &Server{Sink: NewPrometheus(), ln: ln, done: make(chan struct{}), scraped: make(chan struct{})}
	reg := prometheus.NewRegistry()
	// The Go and process collectors of package prometheus itself (the same
	// collectors as package collectors', which also holds a database/sql
	// collector and so compiles database/sql into every mcpbench binary).
	reg.MustRegister(s.Sink, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		metrics.ServeHTTP(w, r)
		s.noteScrape()
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "mcpbench: metrics at /metrics")
	})
	// A foreign Host or Origin gets 403 (DNS rebinding: a web page must
	// not read the run; the rule of mcpbench serve).
	s.srv = &http.Server{Handler: netutil.Guard{}.Wrap(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// noteScrape closes scraped once a scrape was served after the run
// ended.
func (s *Server) noteScrape() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.endedAt.IsZero() && !s.scrapeOK {
		s.scrapeOK = true
		close(s.scraped)
	}
}

// Ended marks the run's end: Close's linger waits for the next scrape
// after it.
func (s *Server) Ended() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endedAt.IsZero() {
		s.endedAt = time.Now()
	}
}

// Close stops the server. With linger > 0 it first waits, up to linger
// or until ctx ends, for a scrape after the run ended (see Ended), so
// the final counts reach Prometheus; it reports whether one came.
func (s *Server) Close(ctx context.Context, linger time.Duration) (scraped bool) {
	s.Ended()
	if linger > 0 {
		t := time.NewTimer(linger)
		select {
		case <-s.scraped:
			scraped = true
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		s.srv.Close() // a scrape hung past the deadline
	}
	<-s.done
	return scraped
}
