package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/proxy"
)

// ProxySpec is what the flags of 'mcpbench proxy' settled.
type ProxySpec struct {
	Config          proxy.Config // the upstream, faults, origins, TLS hosts, the log writer
	Listen          string       // the listen address
	TLSCert, TLSKey string       // serve HTTPS with them ("": plain HTTP, h2c with prior knowledge)
	LogPath         string       // the ground-truth log's path (its summary goes beside it); "": none
	Seed            uint64       // the fault choices' seed, as shown

	Stdout, Stderr io.Writer
}

// ServeProxy serves the fault-injecting proxy until ctx ends, then prints
// the client's verdicts (and writes them beside the log). Errors carry
// their exit code: ExitFailed the listener or the log, ExitUsage a bad
// configuration.
func ServeProxy(ctx context.Context, f ProxySpec) error {
	cfg := f.Config
	RaiseFileLimit()
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return WithExitCode(ExitFailed, fmt.Errorf("%s: %w", setting.ProxyListen, err))
	}
	px, err := proxy.New(cfg)
	if err != nil {
		ln.Close()
		return WithExitCode(ExitUsage, err)
	}
	srv := &http.Server{Handler: px, Protocols: new(http.Protocols), ReadHeaderTimeout: 10 * time.Second}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true) // h2c with prior knowledge
	srv.Protocols.SetHTTP2(true)            // HTTP/2 by ALPN with --tls-cert
	scheme := "http"
	if f.TLSCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(f.Stdout, "mcpbench proxy listening on %s://%s%s → %s (%d faults, seed %d); Ctrl-C to stop\n", scheme, ln.Addr(), cfg.Upstream.Path, cfg.Upstream, len(cfg.Faults), f.Seed)
	fmt.Fprint(f.Stderr, ProxyWarning(ln.Addr().String()))
	fmt.Fprint(f.Stderr, UpstreamWarning(cfg.Upstream))
	done := make(chan error, 1)
	go func() {
		if f.TLSCert != "" {
			done <- srv.ServeTLS(ln, f.TLSCert, f.TLSKey)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case <-ctx.Done():
	case err := <-done:
		px.Close()
		return WithExitCode(ExitFailed, err)
	}
	px.Close() // ends held streams first, so Shutdown need not wait for them
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	if err := px.Close(); err != nil {
		return WithExitCode(ExitFailed, fmt.Errorf("%s: %w", setting.ProxyLog, err))
	}
	v := px.Verdicts()
	WriteProxyVerdicts(f.Stdout, v, px.Planted())
	if f.LogPath != "" {
		path := summaryPath(f.LogPath)
		b, _ := json.MarshalIndent(struct {
			Planted map[proxy.Kind]int   `json:"planted"`
			Client  proxy.ClientVerdicts `json:"client"`
		}{px.Planted(), v}, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			return WithExitCode(ExitFailed, fmt.Errorf("summary: %w", err))
		}
		fmt.Fprintf(f.Stdout, "log %s, summary %s\n", f.LogPath, path)
	}
	return nil
}

// ProxyWarning is the proxy's warning for a listen address that is not
// loopback ("" when it is).
func ProxyWarning(addr string) string {
	if proxy.IsLoopback(addr) {
		return ""
	}
	return fmt.Sprintf("mcpbench: WARNING: proxy listening on %s, not a loopback address: anyone on the network can reach the upstream through it, with faults (use %s 127.0.0.1:PORT to keep it local)\n", addr, setting.ProxyListen)
}

// UpstreamWarning is the proxy's warning for an --upstream that is not on
// loopback ("" when it is): the faults, and the client's requests
// (credentials included), go over the network to another machine.
func UpstreamWarning(up *url.URL) string {
	if netutil.LoopbackName(up.Hostname()) {
		return ""
	}
	return fmt.Sprintf("mcpbench: WARNING [proxy-upstream-remote]: %s %s is not a loopback address: the clients' requests (their Authorization headers included) and the planted faults go over the network to that server; make sure it is yours to test (see docs/troubleshooting.md)\n", setting.ProxyUpstream, up.Redacted())
}

// summaryPath is the summary's path beside the log: x.jsonl → x.summary.json.
func summaryPath(log string) string {
	for _, ext := range []string{".jsonl", ".json", ".log"} {
		if s, ok := strings.CutSuffix(log, ext); ok {
			return s + ".summary.json"
		}
	}
	return log + ".summary.json"
}

// WriteProxyVerdicts prints the proxy's verdicts on the client.
func WriteProxyVerdicts(w io.Writer, v proxy.ClientVerdicts, planted map[proxy.Kind]int) {
	kinds := make([]string, 0, len(planted))
	for k, n := range planted {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	if len(kinds) == 0 {
		kinds = []string{"none"}
	}
	fmt.Fprintf(w, "Planted: %s\n", strings.Join(kinds, ", "))
	fmt.Fprintf(w, "Client: %d streams broken (+%d before any id), %d resumes (%d with the right Last-Event-ID, %d wrong, %d of %d with a retry hint before it), %d not resumed\n",
		v.StreamsBroken, v.BrokenWithoutID, v.Resumes, v.ResumesRightID, v.ResumesWrongID, v.ResumesEarly, v.ResumesHinted, v.NotResumed)
	fmt.Fprintf(w, "        %d calls re-sent after a broken stream; %d planted 404s, %d re-initializations, %d requests on a 404'd session (+%d DELETEs of one: allowed); %d of %d sessions deleted\n",
		v.RequestsResent, v.Planted404, v.Reinitialized, v.DeadSessionUsed, v.DeletedAfter404, v.SessionsDeleted, v.SessionsOpened)
	checks := make([]string, 0, len(v.Checks))
	for k, r := range v.Checks {
		checks = append(checks, k+" "+r)
	}
	sort.Strings(checks)
	fmt.Fprintf(w, "Checks: %s\n", strings.Join(checks, ", "))
	na := make([]string, 0, len(v.NotApplicable))
	for k := range v.NotApplicable {
		na = append(na, k)
	}
	sort.Strings(na)
	for _, k := range na {
		fmt.Fprintf(w, "        %s n/a: %s\n", k, v.NotApplicable[k])
	}
	for _, k := range []string{"reinitialize_after_404", "delete_at_end"} {
		if d := v.Details[k]; d != "" {
			fmt.Fprintf(w, "        %s %s: %s\n", k, v.Checks[k], d)
		}
	}
	if l := v.NotObservableLine(); l != "" {
		fmt.Fprintf(w, "Planted, not observable here: %s\n", strings.TrimPrefix(l, "planted, not observable here: "))
	}
}
