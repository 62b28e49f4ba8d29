package main

import (
	"cmp"
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
	"github.com/mcpbench/mcpbench/probe"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// probeFlags are the flags of `mcpbench probe`.
type probeFlags struct {
	jsonOut, insecure bool
	format            string
	headers           []string
	serverMode        string
	net               netFlags
	tools             probe.Options
}

func newProbeCmd() *cobra.Command {
	var f probeFlags
	cmd := &cobra.Command{
		Use:   "probe [URL]",
		Short: "Show what an MCP server speaks: protocol versions, sessions, streams, error statuses",
		Long: `probe sends 20 to 50 requests (never load) and reports what a server speaks:
the protocol eras and versions (server/discover for 2026-07-28, initialize with
each legacy version), sessions or stateless, JSON or SSE answers; it calls a
tool with a progressToken to get a streaming answer (the reference server's
progress tool, or a read-only tool without required arguments, never another)
and records its event ids, priming event and retry hints; it resumes a
finished stream with Last-Event-ID (the replay must be exact, then end) and a
stream the server closed; and it checks the transport's error cases: unknown
(malformed, and shaped like the server's own), missing and deleted session
ids, DELETE twice, a wrong Content-Type or Accept, a foreign Origin (403) and,
apart, a foreign Host without Origin (DNS rebinding), the server's own origin
(served), ping ({}), three progress calls at once (no notification on a
sibling's stream), PUT (405), a second GET (409), an unknown Last-Event-ID, the session id's
characters, the 401 challenge, and the 2026-07-28 header validation and
subscriptions/listen stream. On a server that speaks both eras the session
checks run in its legacy session and the stateless ones in 2026-07-28; the
protocol column says which. --stream-tool (with --stream-args, and
--close-args for SSE polling) names the tool to call when the server's tools
differ from the reference server's. Every check cites the sentence of the spec it
checks; checks that do not apply say why. --format json prints the report as data.

Exit codes: 0 an MCP endpoint (even when checks differ: the last line counts
them), 1 not an MCP endpoint (neither era answers) or unreachable, 2 usage,
130 interrupted.

Without URL it probes the embedded reference server (--server-mode picks its
mode).`,
		Example: `  mcpbench probe http://127.0.0.1:8080/mcp
  mcpbench probe --server-mode 2026-07-28 --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runProbe(cmd, args, &f) },
	}
	addFormat(cmd.Flags(), &f.format, &f.jsonOut, "text", "json")
	cmd.Flags().BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	cmd.Flags().StringArrayVarP(&f.headers, "header", "H", nil, "extra request header 'Name: value' (repeatable; ${NAME} in the value is read from the environment)")
	f.net.registerTransport(cmd.Flags())
	cmd.Flags().StringVar(&f.serverMode, "server-mode", "", "embedded server mode when no URL is given: stateful, stateless, json, 2026-07-28")
	cmd.Flags().StringVar(&f.tools.StreamTool, "stream-tool", "", "tool to call with a progressToken for the streaming and concurrent-calls checks (a tool that sends progress; default: the reference server's progress tool, or a read-only tool without required arguments)")
	cmd.Flags().StringVar(&f.tools.StreamArgs, "stream-args", "", `arguments of --stream-tool, a JSON object (default {} ; {"count":3} for the reference progress tool)`)
	cmd.Flags().StringVar(&f.tools.CloseArgs, "close-args", "", `arguments of --stream-tool that make the server close its stream early with a retry hint, for the SSE polling checks (default for a progress tool with close_after: {"count":2,"close_after":2[,"retry_ms":250]})`)
	return cmd
}

// runProbe probes args[0], or the embedded reference server, and prints
// the report; the exit code says whether it is an MCP endpoint.
func runProbe(cmd *cobra.Command, args []string, f *probeFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f.tools.Validate(); err != nil {
		return usageError("%v", err)
	}
	cfg := &driver.Config{Insecure: f.insecure, RequestTimeout: 10 * time.Second}
	f.net.config(cfg)
	if errs := cfg.ValidateNet(); len(errs) > 0 {
		return usageError("%v", errors.Join(errs...))
	}
	if len(args) == 1 {
		cfg.URL = args[0]
	} else {
		srv, err := refserver.Start(context.WithoutCancel(ctx), "127.0.0.1:0", refserver.Options{Mode: refserver.Mode(f.serverMode)})
		if err != nil {
			return usageError("%v", err)
		}
		defer srv.Close()
		cfg.URL = srv.URL()
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpbench: no URL given: probing the embedded reference server (%s mode) at %s\n", cmp.Or(f.serverMode, "stateful"), srv.URL())
	}
	shown, err := probeEndpoint(cfg, f.headers)
	if err != nil {
		return usageError("%v", err)
	}
	rep, err := probe.Run(ctx, cfg, f.tools)
	if rep != nil {
		rep.URL = shown
		var werr error
		if f.jsonOut {
			werr = writeJSON(cmd.OutOrStdout(), rep)
		} else {
			werr = writeProbe(cmd.OutOrStdout(), rep)
		}
		if werr != nil && err == nil {
			return &exitError{code: exitFailed, err: werr}
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("probe %s: interrupted", shown)}
	case errors.Is(err, probe.ErrNotMCPEndpoint):
		return &exitError{code: exitFailed, err: fmt.Errorf("probe %s: %w", shown, err)}
	case err != nil:
		return &exitError{code: exitFailed, err: fmt.Errorf("probe %s: %w (%s)", shown, err, driver.Classify(err))}
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
	ep, errs := workload.ResolveEndpoint(cfg.URL, cfg.Header, os.LookupEnv)
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	cfg.URL, cfg.Header = ep.URL, ep.Header
	return ep.Shown, nil
}

// writeProbe prints a probe report: what the server speaks, then every
// check with the sentence of the spec it cites.
func writeProbe(w io.Writer, r *probe.Report) error {
	var b strings.Builder
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(&b, "mcpbench probe %s (%d requests)\n\n", r.URL, r.Requests)
	if r.Discover.Modern {
		fmt.Fprintf(&b, "2026-07-28 (stateless)   yes: server/discover lists %s; answers as %s; subscriptions/listen %s\n",
			strings.Join(r.Discover.Versions, ", "), cmp.Or(r.Discover.AnswerAs, "-"), cmp.Or(r.Discover.Listen, "-"))
	} else {
		fmt.Fprintf(&b, "2026-07-28 (stateless)   no: %s\n", r.Discover.Error)
	}
	for _, l := range r.Legacy {
		if l.Error != "" {
			fmt.Fprintf(&b, "initialize %-13s no: %s\n", l.Requested, l.Error)
			continue
		}
		fmt.Fprintf(&b, "initialize %-13s yes: negotiated %s, Mcp-Session-Id %s\n", l.Requested, l.Negotiated, yes(l.SessionID))
	}
	if !r.MCPEndpoint {
		for _, c := range r.Cases {
			writeCase(&b, c)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	priming := yes(r.Priming)
	if r.Priming && !strings.HasPrefix(r.Resumable, "yes") {
		priming += ", but " + r.Resumable
	}
	streaming := streamingLine(&r.Streaming)
	if r.LegacyStreaming != nil {
		streaming += "\n             " + streamingLine(r.LegacyStreaming)
	}
	fmt.Fprintf(&b, "\nsessions     %s\nanswers      %s\nstreaming    %s\nevent ids    %s\npriming      %s\nretry hints  %s\nresumable    %s\nGET stream   %s\nauto picks   %s\n",
		r.Sessions, r.Answers, streaming, yes(r.EventIDs), priming, hints(r.RetryHints), r.Resumable, r.GETStream, r.Recommended)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if v := legacyVersion(r); r.Discover.Modern && v != "" {
		fmt.Fprintf(&b, "note: the server speaks %s (%s) and 2026-07-28: the session checks ran in %s, the stateless ones in 2026-07-28 (the protocol column says which)\n", v, r.Sessions, v)
	}
	fmt.Fprintf(&b, "\n%-54s %-10s %6s %8s  %-40s %s\n", "check", "protocol", "status", "json-rpc", "expected", "result")
	for _, c := range r.Cases {
		writeCase(&b, c)
	}
	fmt.Fprintf(&b, "\n%d of %d checks differ from the spec", r.Differ, r.Checked)
	if na := len(r.Cases) - r.Checked; na > 0 {
		fmt.Fprintf(&b, " (%d did not apply)", na)
	}
	b.WriteString(".\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// legacyVersion is the version of the probe's legacy session: the first
// legacy version negotiated ("" when none was).
func legacyVersion(r *probe.Report) string {
	for _, l := range r.Legacy {
		if l.Negotiated != "" {
			return l.Negotiated
		}
	}
	return ""
}

// writeCase prints one check: its row, what differed or why it does not
// apply, and the sentence it cites.
func writeCase(b *strings.Builder, c probe.Case) {
	status, code := "-", ""
	if c.Status != 0 {
		status = fmt.Sprint(c.Status)
	}
	if c.RPCCode != 0 {
		code = fmt.Sprint(c.RPCCode)
	}
	mark := c.Result
	if c.Result == probe.Differs {
		mark = "DIFFERS"
	}
	fmt.Fprintf(b, "%-54s %-10s %6s %8s  %-40s %s\n", c.Case, cmp.Or(c.Protocol, "-"), status, code, c.Expected, mark)
	if c.Detail != "" {
		label := "got"
		switch c.Result {
		case probe.NA:
			label = "why"
		case probe.OK:
			label = "saw"
		}
		fmt.Fprintf(b, "    %s: %s\n", label, c.Detail)
	}
	fmt.Fprintf(b, "    spec: %s\n", c.Spec)
}

// streamingLine sums up the streaming answer the probe triggered.
func streamingLine(s *probe.Stream) string {
	if strings.HasPrefix(s.Why, "not run: ") {
		return s.Why
	}
	if s.Tool == "" || s.AnsweredAs == "" {
		return "not triggered: " + s.Why
	}
	head := fmt.Sprintf("tools/call %s%s (%s) with a progressToken: ", s.Tool, s.Args, s.Era)
	if s.AnsweredAs != "sse" {
		return head + "answered as application/json (no stream)"
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("SSE, %d events, %d progress", s.Events, s.Progress))
	if s.EventIDs {
		parts = append(parts, "event ids")
	} else {
		parts = append(parts, "no event ids")
	}
	if s.Priming {
		parts = append(parts, "priming event")
	}
	if len(s.RetryHints) > 0 {
		parts = append(parts, "retry "+hints(s.RetryHints))
	}
	switch {
	case s.Response && s.Ended:
		parts = append(parts, "response, then the end")
	case s.Response:
		parts = append(parts, "response, stream left open")
	case s.Ended:
		parts = append(parts, "closed before the response")
	default:
		parts = append(parts, "no response")
	}
	return head + strings.Join(parts, ", ")
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
