// Command hostile serves one of mcpbench's hostile test servers (see
// internal/mcptest.HostileCases) on loopback until Ctrl-C, in front of a
// reference server for the parts that behave, so mcpbench can be measured
// against it as its own process (wall time, max RSS):
//
//	go run ./scripts/hostile -case huge-json -addr 127.0.0.1:18200 &
//	/usr/bin/time -v mcpbench run --url http://127.0.0.1:18200/mcp --vus 16 --duration 10s
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

func main() {
	name := flag.String("case", "", "the hostile case")
	addr := flag.String("addr", "127.0.0.1:18200", "listen address (loopback)")
	flag.Parse()
	if _, ok := mcptest.HostileCases[*name]; !ok {
		fmt.Fprintln(os.Stderr, "cases:")
		for _, k := range slices.Sorted(maps.Keys(mcptest.HostileCases)) {
			fmt.Fprintf(os.Stderr, "  %-16s %s\n", k, mcptest.HostileCases[k])
		}
		os.Exit(2)
	}
	h, err := refserver.NewHandler(refserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	url, stop, err := mcptest.ServeHostile(*name, *addr, h)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("hostile %s: %s (%s)\n", *name, url, mcptest.HostileCases[*name])
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	<-ctx.Done()
	stop()
}
