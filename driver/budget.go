package driver

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
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
// answers at once; the others wait (counted: Waits, Waited). The buffer of
// a JSON answer with a Content-Length is kept by the budget for the next
// answer of about its size (within the budget, counted with the
// reservations; the process-wide default budget keeps none), so repeated
// large answers leave nothing to the collector. The process's resident
// memory is higher: the small per-session buffers, and dropped buffers
// the Go collector has not yet reclaimed (with GOGC=100 it lets the heap
// grow by as much again as it holds live; AutoMemoryLimit bounds that).
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

	// free holds buffers of sized JSON answers given back (takeSized,
	// giveSized), for the next answer of about the same size: repeated
	// large answers then reuse their buffers instead of leaving one to the
	// collector each. Their bytes count with the reservations: held +
	// cached never exceeds size (cached buffers are dropped to keep it).
	mu     sync.Mutex
	free   [][]byte
	cached int64
}

// takeSized reserves and returns a buffer of n bytes for a JSON answer of
// a known size: a buffer given back with a capacity of n to n + n/16
// (the reservation grows to its capacity), else a new one. The
// reservation comes first, so a caller waiting for room holds no buffer.
// It fails only when ctx ends. giveSized gives it back.
func (b *Budget) takeSized(ctx context.Context, n int64) ([]byte, int64, error) {
	held, err := b.acquire(ctx, n)
	if err != nil {
		return nil, 0, err
	}
	b.mu.Lock()
	for i, f := range b.free {
		c := int64(cap(f))
		if c < n || c > n+n/16 || (c > held && !b.sem.TryAcquire(c-held)) {
			continue
		}
		if c > held {
			b.note(c - held)
			held = c
		}
		b.free = slices.Delete(b.free, i, i+1) // (zeroes the slot left behind: nothing dropped stays referenced)
		b.cached -= c
		b.mu.Unlock()
		return f[:n], held, nil
	}
	b.mu.Unlock()
	b.trim()
	return make([]byte, n), held, nil
}

// giveSized releases a takeSized reservation and keeps its buffer for the
// next answer when the reservations and the kept buffers together stay
// within the budget.
func (b *Budget) giveSized(buf []byte, held int64) {
	b.release(held)
	if int64(cap(buf)) != held || b == defaultBudget {
		return // (the process-wide default outlives any run: it keeps nothing)
	}
	b.mu.Lock()
	if b.held.Load()+b.cached+held <= b.size {
		b.free = append(b.free, buf[:0])
		b.cached += held
	}
	b.mu.Unlock()
}

// trim drops kept buffers (to the collector) until the reservations and
// the kept buffers together are within the budget.
func (b *Budget) trim() {
	b.mu.Lock()
	for len(b.free) > 0 && b.held.Load()+b.cached > b.size {
		b.cached -= int64(cap(b.free[0]))
		b.free = slices.Delete(b.free, 0, 1)
	}
	b.mu.Unlock()
}

// NewBudget returns a budget of size bytes (at least 1 MiB).
func NewBudget(size int64) *Budget {
	size = max(size, 1<<20)
	for b := largestBudget.Load(); size > b && !largestBudget.CompareAndSwap(b, size); b = largestBudget.Load() {
	}
	if autoLimit.Load() {
		applyMemoryLimit()
	}
	return &Budget{sem: semaphore.NewWeighted(size), size: size}
}

// The soft memory limit that follows the budgets (AutoMemoryLimit).
var (
	autoLimit     atomic.Bool
	largestBudget atomic.Int64
	limitMu       sync.Mutex
	limitSet      int64
)

// MemoryLimitFactor is the soft memory limit AutoMemoryLimit sets, as a
// multiple of the largest Budget: 2 (256 MiB for the default 128 MiB), so
// that the process's resident memory stays within 3× the budget: the
// limit counts the Go heap, stacks and runtime; the rest (the binary's
// pages) and the collector's overshoot while it runs are ~20–40 MB
// (TestLargeAnswersRSSWithinThreeBudgets: 239–274 MiB with 60 MiB
// answers).
const MemoryLimitFactor = 2.0

// AutoMemoryLimit makes the Go runtime's soft memory limit
// (debug.SetMemoryLimit) follow the large-message budgets, when the
// environment sets no GOMEMLIMIT: MemoryLimitFactor × the largest Budget
// made so far (NewBudget), or twice the live heap when that is more (as
// GOGC=100 lets the heap grow anyway, so a run whose own live heap is
// large is never collected more often than without a limit). The live
// heap is re-read every 500 ms until stop is called.
//
// Why: the buffers of a large message are dropped once it is handled,
// and with GOGC=100 alone the collector lets dropped ones pile up to as
// much again as the heap holds live: 60 MiB answers within the default
// 128 MiB budget reached 390–508 MB of RSS (issue 33). The cost: when the
// heap nears the limit the collector runs more often, each cycle marking
// the live heap's pointers (a large message's bytes hold none, so a
// cycle costs what the sessions and histograms cost to mark, about a
// millisecond per 10 MB); a run that never holds large messages never
// nears it. mcpbench's main calls it; a program using the driver may.
func AutoMemoryLimit() (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" || !autoLimit.CompareAndSwap(false, true) {
		return func() {}
	}
	applyMemoryLimit()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				applyMemoryLimit()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			autoLimit.Store(false)
			limitMu.Lock()
			debug.SetMemoryLimit(math.MaxInt64)
			limitSet = 0
			limitMu.Unlock()
		})
	}
}

// applyMemoryLimit sets the soft memory limit AutoMemoryLimit keeps (none
// before the first budget).
func applyMemoryLimit() {
	b := largestBudget.Load()
	if b == 0 {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	var live int64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = int64(s[0].Value.Uint64())
	}
	lim := max(int64(MemoryLimitFactor*float64(b)), 2*live)
	limitMu.Lock()
	defer limitMu.Unlock()
	if !autoLimit.Load() || lim == limitSet {
		return
	}
	debug.SetMemoryLimit(lim)
	limitSet = lim
}

// MemoryLimit returns the soft memory limit AutoMemoryLimit set (bytes; 0:
// none).
func MemoryLimit() int64 {
	limitMu.Lock()
	defer limitMu.Unlock()
	return limitSet
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
	b.note(n)
	return n, nil
}

// note counts n more bytes reserved (held, peak).
func (b *Budget) note(n int64) {
	h := b.held.Add(n)
	for p := b.peak.Load(); h > p && !b.peak.CompareAndSwap(p, h); p = b.peak.Load() {
	}
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
