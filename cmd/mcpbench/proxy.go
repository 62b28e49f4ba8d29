package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/proxy"
	"github.com/spf13/cobra"
)

const proxyLong = `proxy sits between any MCP client and any MCP server (Streamable HTTP) and
plants seeded faults at SSE event boundaries, so that you can see whether a
client survives a cut stream, resumes with the right Last-Event-ID, honours
the retry hint, never re-sends a tool call and re-initializes after a 404.

Every request goes to --upstream (POST answers, JSON or SSE; GET streams;
resumes; DELETE), Host and Origin unchanged. SSE answers are parsed event by
event and re-sent with a flush per event; nothing is buffered whole. As serve
does, the proxy answers 403 (and forwards nothing) to a request with a
foreign Origin (--allow-origin adds origins) or, on loopback, a Host that is
not a loopback name nor one of --tls-cert's names (DNS rebinding).

--fault takes "KIND key=value ...", repeatable; each has p= (probability per
stream, default 1) and target= (post, get, resume, any, a JSON-RPC method
such as tools/call, or progress / response for the events of any stream):
  drop | duplicate [id=strip] | swap      one event (at=K: the K-th the target selects)
  inject from=session|other               a progress event of another stream
  hold-progress | drop-response           progress after the response; no response
  cut after=N | mid=N | before_id [close=fin|rst]
  stall after=N for=D | delay delay=D | keep-open [for=D]
  retry retry=MS|none                     rewrite or remove retry hints
  replay mode=too-much|too-little|wrong-place|silent [n=N] [for=D]   (on resumes)
  status code=404|429|503 [retry_after=S]
  storm at=D [every=D] [close=fin|rst]    close every open GET stream

--log writes the ground truth as JSON lines: every request, every event
forwarded, every planted fault ("fault": kind) and every stream's end. On
exit (Ctrl-C) the proxy prints its verdicts on the client and writes them,
with the planted counts, to LOG.summary.json.`

const proxyExamples = `  mcpbench serve --addr 127.0.0.1:8080 &
  mcpbench proxy --listen 127.0.0.1:9090 --upstream http://127.0.0.1:8080/mcp \
      --fault "cut after=2 p=0.5" --fault "retry retry=2000" --seed 7 --log /tmp/proxy.jsonl
  # then point your client at http://127.0.0.1:9090/mcp, run it, and Ctrl-C the proxy`

// upstreamCredentials is the remedy of a refused --upstream with
// user:password@, which the proxy would print and never send.
const upstreamCredentials = "the proxy sends each client's own headers (Authorization included) upstream: give the credentials to the client, not in --upstream"

func newProxyCmd() *cobra.Command {
	var (
		listen, upstream, logPath string
		tlsCert, tlsKey, upCA     string
		faults, allowOrigins      []string
		seed                      uint64
		h2c                       bool
	)
	cmd := &cobra.Command{
		Use:     "proxy",
		Short:   "Plant seeded SSE faults between any MCP client and server, with a ground-truth log",
		Long:    proxyLong,
		Example: proxyExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := secret.RefuseUserinfo("--upstream", upstream, upstreamCredentials); err != nil {
				return usageError("%v", err) // the same refusal as run's (flags_secret.go)
			}
			up, err := url.Parse(upstream)
			if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
				return usageError("--upstream %q: want the server's MCP endpoint, e.g. http://127.0.0.1:8080/mcp", secret.RedactURL(upstream))
			}
			cfg := proxy.Config{Upstream: up, Seed: seed, UpstreamH2C: h2c, AllowedOrigins: allowOrigins}
			var errs []error
			if _, err := netutil.NewOriginPolicy(allowOrigins); err != nil {
				errs = append(errs, fmt.Errorf("--allow-origin %w", err))
			}
			for _, s := range faults {
				f, err := proxy.ParseFault(s)
				if err != nil {
					errs = append(errs, fmt.Errorf("--fault: %w", err))
				}
				cfg.Faults = append(cfg.Faults, f)
			}
			if upCA != "" {
				pem, err := os.ReadFile(upCA)
				cfg.UpstreamCAs = x509.NewCertPool()
				if err != nil {
					errs = append(errs, fmt.Errorf("--upstream-ca: %w", err))
				} else if !cfg.UpstreamCAs.AppendCertsFromPEM(pem) {
					errs = append(errs, fmt.Errorf("--upstream-ca %s: no PEM certificate in it", upCA))
				}
			}
			if (tlsCert == "") != (tlsKey == "") {
				errs = append(errs, errors.New("--tls-cert and --tls-key go together"))
			} else if tlsCert != "" {
				hosts, err := certHosts(tlsCert, tlsKey)
				if err != nil {
					errs = append(errs, fmt.Errorf("--tls-cert: %w", err))
				}
				cfg.Hosts = hosts
			}
			if len(errs) > 0 {
				return usageError("%w", errors.Join(errs...))
			}
			var logFile *os.File
			if logPath != "" {
				if logFile, err = os.Create(logPath); err != nil {
					return usageError("--log: %v", err)
				}
				defer logFile.Close()
				cfg.Log = logFile
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return launch.ServeProxy(ctx, launch.ProxySpec{Config: cfg, Listen: listen, TLSCert: tlsCert, TLSKey: tlsKey,
				LogPath: logPath, Seed: seed, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:9090", "listen address (a non-loopback address gets a warning)")
	f.StringVar(&upstream, "upstream", "", "the server's MCP endpoint, e.g. http://127.0.0.1:8080/mcp (required)")
	f.StringArrayVar(&faults, "fault", nil, "a fault: \"KIND key=value ...\" (repeatable; see above)")
	f.StringArrayVar(&allowOrigins, "allow-origin", nil, "serve browser requests with this Origin (scheme://host[:port]; repeatable; \"*\" allows all); other foreign Origins get 403, as do foreign Host headers on loopback")
	f.Uint64Var(&seed, "seed", 1, "seed of the fault choices (stream n draws from (seed, n))")
	f.StringVar(&logPath, "log", "", "write the ground truth here as JSON lines (and the verdicts to LOG.summary.json)")
	f.BoolVar(&h2c, "upstream-h2c", false, "speak HTTP/2 without TLS (prior knowledge) to an http:// upstream")
	f.StringVar(&upCA, "upstream-ca", "", "verify an https:// upstream with these CA certificates (PEM) instead of the system's")
	f.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS (HTTP/2 by ALPN) with this certificate (PEM)")
	f.StringVar(&tlsKey, "tls-key", "", "the key of --tls-cert (PEM)")
	cmd.MarkFlagRequired("upstream")
	return cmd
}

// certHosts returns the DNS names and IP addresses of the certificate
// in certFile (the leaf of the pair with keyFile): the Host names a
// request reaching the proxy on loopback may carry besides the loopback
// ones.
func certHosts(certFile, keyFile string) ([]string, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	leaf := pair.Leaf
	if leaf == nil && len(pair.Certificate) > 0 {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, err
		}
	}
	if leaf == nil {
		return nil, errors.New("no certificate in it")
	}
	hosts := slices.Clone(leaf.DNSNames)
	for _, ip := range leaf.IPAddresses {
		hosts = append(hosts, ip.String())
	}
	return hosts, nil
}
