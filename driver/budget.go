package driver

import (
	"context"
	"fmt"
	"io"
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

// keepJSONBuf keeps b as the session's JSON buffer when it is small, else
// drops it (a large answer's buffer is not held for the rest of the run).
func (s *Session) keepJSONBuf(b []byte) {
	if cap(b) <= jsonSmall {
		s.jbuf = b[:0]
	} else {
		s.jbuf = nil
	}
}

// chunkSize is the unit large JSON bodies of unknown size are read in.
// The chunks are not pooled: a pool would hold them past the reservation
// that covers them.
const chunkSize = 256 << 10

// readMessage reads a JSON answer: up to jsonSmall into the session's own
// buffer; beyond, the bytes the answer's buffers will hold are reserved
// from the memory budget first, so that what the budget counts is what
// is held:
//
//   - size known (Content-Length): size bytes, read straight into one
//     buffer of exactly that size;
//   - size unknown (chunked, gzip): 2×limit, as the rest is read into
//     chunks and joined (chunks and message both held) only when the
//     whole message fits the limit, so an answer over the limit costs no
//     copy.
//
// Over limit it fails with ErrResponseTooLarge naming the limit. held is
// the budget to release once the message is handled.
func (s *Session) readMessage(ctx context.Context, r io.Reader, size, limit int64) (msg []byte, held int64, err error) {
	buf := s.jbuf[:0]
	if cap(buf) < 4096 {
		buf = make([]byte, 0, 4096)
	}
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= jsonSmall {
				break // large: go on in chunks
			}
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > limit {
			return buf, 0, fmt.Errorf("%w %s; raise it with --max-message-bytes", ErrResponseTooLarge, units.Size(limit))
		}
		if err == io.EOF {
			return buf, 0, nil
		}
		if err != nil {
			return buf, 0, err
		}
	}
	if size > 0 {
		return s.readSized(ctx, r, buf, size)
	}
	if held, err = s.budget.acquire(ctx, 2*limit); err != nil {
		return buf, 0, err
	}
	var chunks [][]byte
	total := int64(len(buf))
	for {
		c := make([]byte, chunkSize)
		chunks = append(chunks, c)
		n, err := io.ReadFull(r, c)
		total += int64(n)
		if total > limit {
			return buf, held, fmt.Errorf("%w %s; raise it with --max-message-bytes", ErrResponseTooLarge, units.Size(limit))
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			out := make([]byte, 0, total)
			out = append(out, buf...)
			for i, c := range chunks {
				part := c
				if i == len(chunks)-1 {
					part = part[:n]
				}
				out = append(out, part...)
			}
			return out, held, nil
		}
		if err != nil {
			return buf, held, err
		}
	}
}

// readSized reads the rest of an answer of a known size (its
// Content-Length, at most the limit: readJSON checked) into one buffer of
// that size, after reserving it; buf holds what was read so far. The body
// reader ends at size, so nothing beyond is read.
func (s *Session) readSized(ctx context.Context, r io.Reader, buf []byte, size int64) (msg []byte, held int64, err error) {
	if held, err = s.budget.acquire(ctx, size); err != nil {
		return buf, 0, err
	}
	out := make([]byte, max(size, int64(len(buf))))
	n := copy(out, buf)
	m, err := io.ReadFull(r, out[n:])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil // a short body: parsing says what is missing
	}
	return out[:n+m], held, err
}
