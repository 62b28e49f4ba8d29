package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version returns mcpbench's module version ("dev" in a source build) and
// the go-sdk version it embeds.
func version() (mcpbench, sdk string) {
	mcpbench, sdk = "dev", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		mcpbench = v
	} else {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				mcpbench = "dev-" + s.Value[:12]
			}
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/modelcontextprotocol/go-sdk" {
			sdk = d.Version
		}
	}
	return
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of mcpbench, Go and the embedded MCP Go SDK",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, sdk := version()
			fmt.Fprintf(cmd.OutOrStdout(), "mcpbench %s (%s, %s/%s; reference server on go-sdk %s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, sdk)
			return nil
		},
	}
}
