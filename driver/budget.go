package driver

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/units"
	"golang.org/x/sync/semaphore"
)

// Budget bounds the memory that large messages hold across every session
// that shares it: a session reads small messages into its own small
// buffers (sse.SmallBuffer), and a message larger than that — a JSON answer or
// an SSE event — first reserves the buffers it will hold from the budget
// (a JSON answer with a Content-Length: that size; one without: twice the
// size limit, chunks and the joined message; an SSE event: twice
// max_event_bytes, line and data buffers), and gives it back once the
// message is handled and its buffers dropped. So the large-message
// buffers in use never exceed the budget, however many VUs meet huge
// answers at once; the others wait (counted: Waits, Waited). The
// process's resident memory is higher: the small per-session buffers, and
// dropped buffers the Go collector has not yet reclaimed (with GOGC=100 it
// lets the heap grow by as much again as it holds live).
//
// A Budget is safe for concurrent use. The zero value is not usable; use
// NewBudget.
type Budget struct {
	sem  *semaphore.Weighted
	size int64

	waits    atomic.Int64
	waitedNS atomic.Int64
	peak     atomic.Int64
	held     atomic.Int64
}

// NewBudget returns a budget of size bytes (at least 1 MiB).
func NewBudget(size int64) *Budget {
	size = max(size, 1<<20)
	return &Budget{sem: semaphore.NewWeighted(size), size: size}
}

// Size returns the budget in bytes.
func (b *Budget) Size() int64 { return b.size }

// acquire reserves n bytes (capped at the budget's size), waiting while
// other sessions hold too much of it; it fails only when ctx ends. It
// returns the bytes reserved, for release.
func (b *Budget) acquire(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 1), b.size)
	if !b.sem.TryAcquire(n) {
		t0 := time.Now()
		b.waits.Add(1)
		err := b.sem.Acquire(ctx, n)
		b.waitedNS.Add(int64(time.Since(t0)))
		if err != nil {
			return 0, fmt.Errorf("waiting for the large-message memory budget (%s): %w", units.Size(b.size), context.Cause(ctx))
		}
	}
	h := b.held.Add(n)
	for p := b.peak.Load(); h > p && !b.peak.CompareAndSwap(p, h); p = b.peak.Load() {
	}
	return n, nil
}

func (b *Budget) release(n int64) {
	if n > 0 {
		b.held.Add(-n)
		b.sem.Release(n)
	}
}

// BudgetStats says how the budget was used.
type BudgetStats struct {
	Size   int64         // bytes
	Peak   int64         // most bytes reserved at once (large-message buffers in use)
	Waits  int64         // reservations that had to wait
	Waited time.Duration // total time spent waiting
}

// Stats returns the budget's use so far. Safe for concurrent use.
func (b *Budget) Stats() BudgetStats {
	return BudgetStats{Size: b.size, Peak: b.peak.Load(), Waits: b.waits.Load(), Waited: time.Duration(b.waitedNS.Load())}
}

// jsonSmall is the JSON buffer a session keeps between messages.
const jsonSmall = 64 << 10

// chunkSize is the unit large JSON bodies of unknown size are read in.
// The chunks are not pooled: a pool would hold them past the reservation
// that covers them.
const chunkSize = 256 << 10
