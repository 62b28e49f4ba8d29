package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/probe"
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
	ps := launch.ProbeSpec{ServerMode: f.serverMode, Headers: f.headers, Insecure: f.insecure, JSON: f.jsonOut,
		HTTP: f.net.http, Proxy: f.net.proxy, CA: f.net.ca, Cert: f.net.cert, Key: f.net.key, ServerName: f.net.serverName,
		Tools: f.tools, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
	if len(args) == 1 {
		ps.URL = args[0]
	}
	return launch.Probe(ctx, ps)
}
