package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/spf13/cobra"
)

// serveLong is serve's help text.
const serveLong = `serve runs the reference MCP server that "mcpbench run" embeds, as its own
process: to benchmark it with mcpbench (so the generator's cost is measured
alone) or with another tool.

Browser requests (with an Origin header) are served only from the server's own
origin and the --allow-origin ones; others get 403 (DNS rebinding protection).
It listens on 127.0.0.1 by default: another address is reachable from the
network, and serve warns about it (with --auth too: its authorization server
is a test fixture). With --auth on a wildcard address (0.0.0.0, [::]) the
401's resource_metadata and the metadata name the address each client used.

Tools: echo{text}, slow{ms}, progress{count, interval_ms, close_after,
retry_ms}, long{ms, interval_ms}, payload{bytes}, notify{count, interval_ms},
sample, elicit, roots, ask, count{key, ms}, log{count, level}, touch{uri},
toggle_tool, fail{message}. Resources mcpbench://static/small and
mcpbench://static/large, the template mcpbench://items/{id} (subscribable;
touch changes them); prompt greet{name}; completions of greet's name and of
the template's id. A cancelled tool call (notifications/cancelled) stops and
gets nothing more.`

func newServeCmd() *cobra.Command {
	var (
		addr           string
		mode           string
		tick, getRetry time.Duration
		leak, pageSize int
		allowOrigins   []string
		pidFile        string
		streamLinks    bool
		nf             serveNetFlags
	)
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "Run the reference MCP server (official Go SDK) until Ctrl-C",
		Long:    serveLong,
		Example: serveExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := refserver.Options{Mode: refserver.Mode(mode), TickInterval: tick, GETRetry: getRetry, LeakPerSession: leak, AllowedOrigins: allowOrigins, PageSize: pageSize, StreamLinks: streamLinks}
			if err := nf.options(&opts, cmd.Flags().Changed); err != nil {
				return usageError("%v", err)
			}
			if err := opts.Validate(); err != nil {
				return usageError("%v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			launch.RaiseFileLimit()
			srv, err := refserver.Start(ctx, addr, opts)
			if err != nil {
				return withCode(exitFailed, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mcpbench reference server (%s mode) listening on %s\n", opts.Mode, srv.URL())
			if err := nf.describe(cmd.OutOrStdout(), srv); err != nil {
				srv.Close()
				return withCode(exitFailed, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pid %d; Ctrl-C to stop\n", os.Getpid())
			fmt.Fprint(cmd.ErrOrStderr(), exposureWarning(srv.Addr(), srv.Loopback(), opts.Auth != nil, opts.TLS != nil))
			if pidFile != "" {
				// Written once listening, so a script that waits for the file
				// can connect at once; removed on exit.
				if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
					srv.Close()
					return withCode(exitFailed, fmt.Errorf("--pid-file: %w", err))
				}
				defer os.Remove(pidFile)
			}
			if leak > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "TEST FIXTURE: leaking %d bytes per session on purpose\n", leak)
			}
			<-ctx.Done()
			nf.stopped(cmd.OutOrStdout(), srv)
			return srv.Close() // bounded: running tools are aborted, connections forced closed after ~3 s
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address (port 0 picks a free one; a non-loopback address gets a warning)")
	cmd.Flags().StringVar(&mode, "mode", "stateful", "stateful, stateless, json or 2026-07-28")
	cmd.Flags().DurationVar(&tick, "tick", 0, "send a numbered notification on every session's GET stream this often (0: off)")
	cmd.Flags().DurationVar(&getRetry, "get-retry", 0, "retry hint sent at the start of every GET stream (0: none)")
	cmd.Flags().IntVar(&pageSize, "page-size", 0, "at most this many items per page of tools/list, resources/list, resources/templates/list, prompts/list (0: 1000)")
	cmd.Flags().StringArrayVar(&allowOrigins, "allow-origin", nil, "serve browser requests with this Origin (scheme://host[:port]; repeatable; \"*\" allows all); other foreign Origins get 403")
	cmd.Flags().BoolVar(&streamLinks, "stream-links", false, "send a rel=\"stream\" Link header on every SSE stream and serve resumes there (SEP-1335 draft; stateful and json modes)")
	cmd.Flags().StringVar(&pidFile, "pid-file", "", "write the server's pid to this file once listening; removed on exit")
	nf.register(cmd.Flags())
	cmd.Flags().IntVar(&leak, "leak-per-session", 0, "TEST FIXTURE: keep this many bytes per session forever (a deliberate leak, to check mcpbench soak's leak verdict)")
	cmd.Flags().MarkHidden("leak-per-session")
	return cmd
}

// serveExamples are serve's --help examples.
const serveExamples = `  mcpbench serve                          # 127.0.0.1:8080, stateful, resumable
  mcpbench serve --addr 127.0.0.1:0       # any free port (printed)
  mcpbench serve --mode stateless         # no sessions; GET and DELETE answer 405
  mcpbench serve --mode json              # application/json answers
  mcpbench serve --allow-origin https://app.example   # a browser app may call it
  mcpbench serve --tls --tls-dir /tmp/mcpbench-tls  # HTTPS, HTTP/2 by ALPN; CA in /tmp/mcpbench-tls/ca.pem
  mcpbench serve --tls --mtls --tls-dir /tmp/mcpbench-tls  # clients need /tmp/mcpbench-tls/client.pem
  mcpbench serve --h2c                    # plain HTTP that also speaks h2c
  MCPBENCH_OAUTH_CLIENT_SECRET=s3cret mcpbench serve --auth   # OAuth client credentials
  mcpbench serve --addr 127.0.0.1:8080 --pid-file /tmp/mcpbench-serve.pid &
  mcpbench soak --url http://127.0.0.1:8080/mcp --target-pid "$(cat /tmp/mcpbench-serve.pid)"`
