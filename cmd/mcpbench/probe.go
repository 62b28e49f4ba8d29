package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

func newProbeCmd() *cobra.Command {
	var (
		jsonOut, insecure bool
		headers           []string
		serverMode        string
	)
	cmd := &cobra.Command{
		Use:   "probe [URL]",
		Short: "Show what an MCP server speaks: protocol versions, sessions, streams, error statuses",
		Long: `probe sends a handful of requests (about twenty, never load) and reports what a
server speaks: the protocol eras and versions (server/discover for 2026-07-28,
initialize with each legacy version), sessions or stateless, JSON or SSE
answers, event ids, priming events, retry hints, a GET stream or
subscriptions/listen, and the status codes it gives for the transport's error
cases, each against what the spec requires.

Without URL it probes the embedded reference server (--server-mode picks its
mode).`,
		Example: `  mcpbench probe http://127.0.0.1:8080/mcp
  mcpbench probe --server-mode 2026-07-28 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg := &driver.Config{Insecure: insecure, RequestTimeout: 10 * time.Second}
			if len(args) == 1 {
				cfg.URL = args[0]
			} else {
				srv, err := refserver.Start(context.WithoutCancel(ctx), "127.0.0.1:0", refserver.Options{Mode: refserver.Mode(serverMode)})
				if err != nil {
					return usageError("%v", err)
				}
				defer srv.Close()
				cfg.URL = srv.URL()
				fmt.Fprintf(cmd.ErrOrStderr(), "mcpbench: no URL given: probing the embedded reference server (%s mode) at %s\n", cmpOr(serverMode, "stateful"), srv.URL())
			}
			for _, h := range headers {
				name, value, err := driver.ParseHeader(h)
				if err != nil {
					return usageError("%v", err)
				}
				if cfg.Header == nil {
					cfg.Header = map[string][]string{}
				}
				cfg.Header[name] = append(cfg.Header[name], value)
			}
			ep, errs := workload.ResolveEndpoint(cfg.URL, cfg.Header, os.LookupEnv) // ${NAME}, userinfo as Basic auth
			if len(errs) > 0 {
				return usageError("%v", errors.Join(errs...))
			}
			cfg.URL, cfg.Header = ep.URL, ep.Header
			rep, err := driver.Probe(ctx, cfg)
			if err != nil {
				return &exitError{code: exitFailed, err: fmt.Errorf("probe %s: %w (%s)", ep.Shown, err, driver.Classify(err))}
			}
			rep.URL = ep.Shown
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return writeProbe(cmd.OutOrStdout(), rep)
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "machine-readable output")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "skip TLS certificate verification")
	cmd.Flags().StringArrayVarP(&headers, "header", "H", nil, "extra request header 'Name: value' (repeatable; ${NAME} in the value is read from the environment)")
	cmd.Flags().StringVar(&serverMode, "server-mode", "", "embedded server mode when no URL is given: stateful, stateless, json, 2026-07-28")
	return cmd
}

func writeProbe(w io.Writer, r *driver.ProbeReport) error {
	var b strings.Builder
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(&b, "mcpbench probe %s\n\n", r.URL)
	if r.Discover.Modern {
		fmt.Fprintf(&b, "2026-07-28 (stateless)   yes: server/discover lists %s; answers as %s; subscriptions/listen %s (acknowledged: %s)\n",
			strings.Join(r.Discover.Versions, ", "), cmpOr(r.Discover.AnswerAs, "-"), yes(r.Discover.ListenOK), yes(r.Discover.ListenAck))
	} else {
		fmt.Fprintf(&b, "2026-07-28 (stateless)   no: %s\n", r.Discover.Error)
	}
	for _, l := range r.Legacy {
		if l.Error != "" {
			fmt.Fprintf(&b, "initialize %-13s no (HTTP %d): %s\n", l.Requested, l.Status, l.Error)
			continue
		}
		fmt.Fprintf(&b, "initialize %-13s yes: negotiated %s, Mcp-Session-Id %s\n", l.Requested, l.Negotiated, yes(l.SessionID))
	}
	fmt.Fprintf(&b, "\nsessions     %s\nanswers      %s\nevent ids    %s\npriming      %s\nretry hints  %s\nGET stream   %s\nauto picks   %s\n",
		r.Sessions, r.Answers, yes(r.EventIDs), yes(r.Priming), hints(r.RetryHints), r.GETStream, r.Recommended)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if len(r.Cases) > 0 {
		fmt.Fprintf(&b, "\n%-58s %6s %8s  %-16s %s\n", "error case", "status", "json-rpc", "spec", "")
		for _, c := range r.Cases {
			code := ""
			if c.RPCCode != 0 {
				code = fmt.Sprint(c.RPCCode)
			}
			mark := "ok"
			if !c.OK {
				mark = "DIFFERS"
			}
			fmt.Fprintf(&b, "%-58s %6d %8s  %-16s %s\n", c.Case, c.Status, code, c.Expected, mark)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hints lists the retry hints a probe saw ("none seen" for none).
func hints(ms []int) string {
	if len(ms) == 0 {
		return "none seen"
	}
	parts := make([]string, len(ms))
	for i, v := range ms {
		parts[i] = fmt.Sprintf("%d ms", v)
	}
	return strings.Join(parts, ", ")
}
