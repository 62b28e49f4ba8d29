package driver

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Bounds on what a server's reconnect hints can make a stream do: a retry
// hint of 2^31 ms must not park a VU until the run ends, and a retry of 0
// with a resume that yields one event must not spin (each such resume
// brings a new event id, so MaxResumes, which counts attempts without
// progress, never stops it).

// DefaultMaxRetryWait is the longest wait a server's retry hint is
// honoured for (Config.MaxRetryWait): a longer hint waits this long, and
// the wait is counted (Result.RetryCapped, StreamStats.RetryCapped).
const DefaultMaxRetryWait = 30 * time.Second

// DefaultMaxStreamResumes bounds the reconnect attempts of one response
// stream in all (Config.MaxStreamResumes).
const DefaultMaxStreamResumes = 1000

// DefaultMaxResumeRate bounds the reconnect attempts of one stream
// (response or GET) in one second (Config.MaxResumeRate).
const DefaultMaxResumeRate = 100

// ErrResumeLimit: a stream was given up because the server made it
// reconnect more often than the bounds allow (Config.MaxStreamResumes in
// all on one response stream, Config.MaxResumeRate in one second on any
// stream). Its class is resume-limit; the error names the bound.
var ErrResumeLimit = errors.New("resume limit")

func (c *Config) maxRetryWait() time.Duration {
	switch {
	case c.MaxRetryWait == 0:
		return DefaultMaxRetryWait
	case c.MaxRetryWait < 0:
		return 0
	}
	return c.MaxRetryWait
}

func (c *Config) maxStreamResumes() int {
	switch {
	case c.MaxStreamResumes == 0:
		return DefaultMaxStreamResumes
	case c.MaxStreamResumes < 0:
		return 0
	}
	return c.MaxStreamResumes
}

func (c *Config) maxResumeRate() int {
	switch {
	case c.MaxResumeRate == 0:
		return DefaultMaxResumeRate
	case c.MaxResumeRate < 0:
		return 0
	}
	return c.MaxResumeRate
}

// hintWait is the wait a retry hint of hintMS ms asks for, capped at max
// (0: no cap, the wait then saturating at the largest Duration); capped
// reports that the hint asked for more than max.
func hintWait(hintMS int, max time.Duration) (wait time.Duration, capped bool) {
	if max > 0 && int64(hintMS) > max.Milliseconds() {
		return max, true
	}
	if int64(hintMS) > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64, false
	}
	return time.Duration(hintMS) * time.Millisecond, false
}

// resumeBound counts one stream's reconnect attempts against the bounds:
// in all (total, response streams only) and per second (a window of 1 s
// that starts at its first attempt, so at most 2×rate attempts fall in
// any 1 s span). Not safe for concurrent use: one stream's reader owns it.
type resumeBound struct {
	n        int32         // attempts so far
	inWin    int32         // attempts in the current window
	winStart time.Duration // start of the current 1 s window, since boundEpoch (monotonic); valid when n > 0
}

// boundEpoch is what resumeBound's windows are measured from: a
// time.Duration since it (16 bytes a bound, where a time.Time would
// take 40: a session's GET stream holds one).
var boundEpoch = time.Now()

// next counts an attempt about to be sent at now. It returns an error
// wrapping ErrResumeLimit, naming the bound, when the attempt would pass
// total (0: none) or rate per second (0: none); the attempt is then not
// sent and not counted.
func (b *resumeBound) next(now time.Time, total, rate int) error {
	if total > 0 && int(b.n) >= total {
		return fmt.Errorf("%w: %d reconnect attempts on one stream (the bound; the server kept ending it)", ErrResumeLimit, b.n)
	}
	at := now.Sub(boundEpoch)
	if b.n == 0 || at-b.winStart >= time.Second {
		b.winStart, b.inWin = at, 0
	}
	if rate > 0 && int(b.inWin) >= rate {
		return fmt.Errorf("%w: %d reconnect attempts within 1 s on one stream (the bound): the server ends the stream again as soon as it is resumed, with a retry hint too short to hold the client back", ErrResumeLimit, b.inWin)
	}
	if b.n < math.MaxInt32 {
		b.n++
	}
	b.inWin++
	return nil
}

// noteRetryCap counts in c one wait capped at limit for a hint of hintMS.
func noteRetryCap(c *RetryCap, hintMS int, limit time.Duration) {
	c.N++
	c.HintMaxMS = max(c.HintMaxMS, int64(hintMS))
	c.Cap = max(c.Cap, limit)
}
