package main

import (
	"os"
	"runtime/metrics"
	"strconv"
)

// allocsFileEnv names a file that, when set, gets the process's heap
// allocations (objects, runtime/metrics /gc/heap/allocs:objects) as it
// exits: scripts/bench-clients.sh divides them by the calls made.
const allocsFileEnv = "MCPBENCH_ALLOCS_FILE"

// writeAllocs writes the heap allocations to $MCPBENCH_ALLOCS_FILE, if set;
// errors are ignored (a measurement aid only).
func writeAllocs() {
	path := os.Getenv(allocsFileEnv)
	if path == "" {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		os.WriteFile(path, strconv.AppendUint(nil, s[0].Value.Uint64(), 10), 0o600)
	}
}
