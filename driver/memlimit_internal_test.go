package driver

import (
	"runtime/debug"
	"testing"
)

// Without GOMEMLIMIT, AutoMemoryLimit keeps the soft memory limit at
// MemoryLimitFactor × the largest budget (the live heap of a test binary
// is far below it), following a larger budget made later, and stop
// lifts it; with GOMEMLIMIT set it does nothing.
func TestAutoMemoryLimitFollowsBudgets(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	if stop := AutoMemoryLimit(); MemoryLimit() != 0 {
		stop()
		t.Fatalf("GOMEMLIMIT set: limit %d, want none of ours", MemoryLimit())
	}
	t.Setenv("GOMEMLIMIT", "")
	stop := AutoMemoryLimit()
	defer stop()
	want := func() int64 { return int64(MemoryLimitFactor * float64(largestBudget.Load())) }
	if got := MemoryLimit(); got != want() || debug.SetMemoryLimit(-1) != got {
		t.Fatalf("limit %d (runtime %d), want %d", got, debug.SetMemoryLimit(-1), want())
	}
	NewBudget(largestBudget.Load() + 64<<20)
	if got := MemoryLimit(); got != want() || debug.SetMemoryLimit(-1) != got {
		t.Fatalf("after a larger budget: limit %d, want %d", got, want())
	}
	stop()
	if MemoryLimit() != 0 || debug.SetMemoryLimit(-1) != 1<<63-1 {
		t.Fatalf("after stop: limit %d, runtime %d", MemoryLimit(), debug.SetMemoryLimit(-1))
	}
}
