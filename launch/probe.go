package launch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/probe"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// ProbeSpec is what the flags of 'mcpbench probe' settled.
type ProbeSpec struct {
	URL        string // the endpoint; "": the embedded reference server in ServerMode
	ServerMode string
	Headers    []string // "Name: value" each (${NAME} from the environment)
	Insecure   bool
	// HTTP, Proxy, CA, Cert, Key and ServerName reach the endpoint
	// (driver.Config's, httpclient.TLSFiles').
	HTTP, Proxy, CA, Cert, Key, ServerName string
	Tools                                  probe.Options
	JSON                                   bool // the report as JSON (else text)

	Stdout, Stderr io.Writer
}

// Probe probes f's endpoint (probe.Run) until done or ctx ends, and
// prints the report: nil for an MCP endpoint, else an error with its
// exit code (ExitFailed not one, or unreachable; ExitInterrupted;
// ExitUsage bad settings).
func Probe(ctx context.Context, f ProbeSpec) error {
	if err := f.Tools.Validate(); err != nil {
		return WithExitCode(ExitUsage, err)
	}
	cfg := &driver.Config{Insecure: f.Insecure, RequestTimeout: 10 * time.Second, HTTP: f.HTTP, Proxy: f.Proxy,
		TLS: httpclient.TLSFiles{CAFile: f.CA, CertFile: f.Cert, KeyFile: f.Key, ServerName: f.ServerName}}
	if errs := cfg.ValidateNet(); len(errs) > 0 {
		return Usagef("%v", errors.Join(errs...))
	}
	if f.URL != "" {
		cfg.URL = f.URL
	} else {
		srv, err := refserver.Start(context.WithoutCancel(ctx), "127.0.0.1:0", refserver.Options{Mode: refserver.Mode(f.ServerMode)})
		if err != nil {
			return WithExitCode(ExitUsage, err)
		}
		defer srv.Close()
		cfg.URL = srv.URL()
		fmt.Fprintf(f.Stderr, "mcpbench: no URL given: probing the embedded reference server (%s mode) at %s\n", cmp.Or(f.ServerMode, "stateful"), srv.URL())
	}
	shown, err := probeEndpoint(cfg, f.Headers)
	if err != nil {
		return WithExitCode(ExitUsage, err)
	}
	rep, err := probe.Run(ctx, cfg, f.Tools)
	if rep != nil {
		rep.URL = shown
		write := probe.WriteText
		if f.JSON {
			write = probe.WriteJSON
		}
		werr := write(f.Stdout, rep)
		if werr != nil && err == nil {
			return WithExitCode(ExitFailed, werr)
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return WithExitCode(ExitInterrupted, fmt.Errorf("probe %s: interrupted", shown))
	case errors.Is(err, probe.ErrNotMCPEndpoint):
		return WithExitCode(ExitFailed, fmt.Errorf("probe %s: %w", shown, err))
	case err != nil:
		return WithExitCode(ExitFailed, fmt.Errorf("probe %s: %w (%s)", shown, err, driver.Classify(err)))
	}
	return nil
}

// probeEndpoint adds the -H headers to cfg and resolves its URL (${NAME}
// from the environment, user:password@ as Basic auth); it returns the URL
// as it may be shown (secrets redacted).
func probeEndpoint(cfg *driver.Config, headers []string) (string, error) {
	for _, h := range headers {
		name, value, err := driver.ParseHeader(h)
		if err != nil {
			return "", err
		}
		if cfg.Header == nil {
			cfg.Header = map[string][]string{}
		}
		cfg.Header[name] = append(cfg.Header[name], value)
	}
	ep, errs := profile.ResolveEndpoint(cfg.URL, cfg.Header, os.LookupEnv)
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	cfg.URL, cfg.Header = ep.URL, ep.Header
	return ep.Shown, nil
}
