package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpbench",
		Short: "Load generator and benchmark for MCP servers over Streamable HTTP",
		Long: `mcpbench drives real MCP sessions against a server over the Streamable HTTP
transport — POST with JSON or SSE answers, standalone GET streams, resumption
with Last-Event-ID that honours retry hints — and reports latency percentiles
(coordinated omission corrected), throughput, errors by class and replay
correctness per stream.

Without --url, "mcpbench run" benchmarks the embedded reference server, so a
fresh machine needs nothing else.`,
		Example: `  # Benchmark the embedded reference server with the default profile
  mcpbench run

  # Benchmark your server: 64 VUs for 30 s
  mcpbench run --url http://127.0.0.1:8080/mcp --vus 64 --duration 30s --out results/

  # Open model: 1000 calls/s, coordinated omission corrected
  mcpbench run --url http://127.0.0.1:8080/mcp --rate 1000 --duration 20s

  # Serve the reference server for another tool (or another mcpbench)
  mcpbench serve --addr 127.0.0.1:8080`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return checkFormat(cmd) // --json, the old spelling of --format json (format.go)
		},
	}
	root.SetFlagErrorFunc(flagError) // flagerr.go: suggests the flag meant, or a duration's unit
	root.AddCommand(newRunCmd(), newSweepCmd(), newSoakCmd(), newServeCmd(), newProbeCmd(), newReportCmd(), newCompareCmd(), newPlotCmd(), newMergeCmd(), newK8sJobCmd(), newProfilesCmd(), newProxyCmd(), newVersionCmd())
	namedAsFlags(root)
	return root
}
