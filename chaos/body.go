package chaos

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/httpclient"
)

// body wraps a response body and applies a fault to it.
type body struct {
	rc    io.ReadCloser
	in    *Injector
	f     *Fault // nil: only storms can cut it
	get   bool
	phase Phase

	// SSE event counting (WHATWG line rules: CR, LF, CRLF).
	events    int
	bytes     int64
	lineStart bool // at the start of a line
	prevCR    bool // the previous byte was CR (a following LF is part of it)
	fields    bool // the current event has a non-comment line
	comment   bool // the current line is a comment
	timer     *time.Timer

	pending  []byte      // bytes held back by a stall
	fired    bool        // the fault has fired (a fault fires once)
	stallReq atomic.Bool // the next Read stalls

	mu     sync.Mutex
	cutErr error // set once the stream is cut: what Read returns from then on
	storm  bool  // the cut was a storm wave's
	closed bool
	done   chan struct{} // closed by a cut or Close: ends a stall
}

// trigger fires a "between" fault from its timer: a cut cuts now, a stall
// makes the next Read wait.
func (b *body) trigger() {
	if b.f.Action == ActionCut {
		b.faultCut(b.f.Close)
		return
	}
	b.stallReq.Store(true)
}

// cut ends the stream: Read returns io.EOF (FIN) or ErrReset from then on.
// On a connection that carries one stream (HTTP/1.1) the connection is
// closed (RST: reset). On a multiplexed one (HTTP/2) layer decides:
// LayerStream resets the stream alone (RST_STREAM: closing an unfinished
// body), LayerConn closes the connection under it (every stream on it
// breaks). storm marks a storm wave's cut (StormCut), set before the
// reader can see the cut. It reports whether it cut, and whether only the
// stream was reset.
func (b *body) cut(c Close, layer Layer, storm bool) (cut, streamOnly bool) {
	b.mu.Lock()
	if b.cutErr != nil || b.closed {
		b.mu.Unlock()
		return false, false
	}
	b.storm = storm
	if c == CloseFIN {
		b.cutErr = io.EOF
	} else {
		b.cutErr = ErrReset
	}
	b.wake()
	b.mu.Unlock()
	mux, _ := b.rc.(httpclient.Multiplexed)
	cc, _ := b.rc.(httpclient.ConnCutter)
	switch {
	case mux != nil && mux.Multiplexed() && layer != LayerConn:
		b.rc.Close() // RST_STREAM
		return true, true
	case cc != nil:
		cc.CutConnection(c == CloseRST)
		b.rc.Close()
	default:
		if r, ok := b.rc.(httpclient.ConnResetter); ok && c == CloseRST {
			r.Reset()
		} else {
			b.rc.Close()
		}
	}
	return true, false
}

// wake ends a stall in progress (b.mu held).
func (b *body) wake() {
	if b.done == nil {
		b.done = make(chan struct{})
	}
	select {
	case <-b.done:
	default:
		close(b.done)
	}
}

func (b *body) doneCh() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done == nil {
		b.done = make(chan struct{})
	}
	return b.done
}

var _ httpclient.StormCutReporter = (*body)(nil)

// StormCut reports whether a storm wave cut this stream, so that the
// reader (the driver, through httpclient.StormCutReporter) can tell the
// reconnects a storm caused from a server's normal stream ends. Safe for
// concurrent use.
func (b *body) StormCut() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.storm
}

func (b *body) cutError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cutErr
}

// Read implements io.Reader, applying the fault when its trigger is met.
func (b *body) Read(p []byte) (int, error) {
	if err := b.cutError(); err != nil {
		return 0, err
	}
	if b.stallReq.CompareAndSwap(true, false) {
		b.in.count(countStall, b.phase)
		t := time.NewTimer(b.f.Stall.D())
		select {
		case <-t.C:
		case <-b.doneCh():
			t.Stop()
			if err := b.cutError(); err != nil {
				return 0, err
			}
			return 0, errClosed
		}
	}
	if len(b.pending) > 0 {
		n := copy(p, b.pending)
		b.pending = b.pending[n:]
		return n, nil
	}
	f := b.f
	if f != nil && !b.fired && f.When.BeforeFirstEvent {
		b.fired = true
		if f.Action == ActionStall {
			b.stallReq.Store(true)
			return b.Read(p)
		}
		b.faultCut(f.Close)
		return 0, b.cutError()
	}
	n, err := b.rc.Read(p)
	if cerr := b.cutError(); cerr != nil {
		return 0, cerr // cut while we were reading (storm or timer)
	}
	if f == nil || b.fired || n == 0 {
		b.scan(p[:n], -1)
		return n, err
	}
	i := b.scan(p[:n], b.stopAt())
	if i < 0 {
		return n, err
	}
	// The trigger is met at byte i: deliver what came before it.
	b.fired = true
	if f.Action == ActionStall {
		b.pending = append(b.pending[:0], p[i:n]...)
		b.stallReq.Store(true)
		if i == 0 {
			return b.Read(p)
		}
		return i, nil
	}
	b.faultCut(f.Close)
	if i == 0 {
		return 0, b.cutError()
	}
	return i, nil
}

// faultCut cuts the stream for its fault and counts the cut.
func (b *body) faultCut(c Close) {
	if ok, streamOnly := b.cut(c, b.f.Layer, false); ok {
		if c == CloseFIN {
			b.in.count(countFIN, b.phase)
		} else {
			b.in.count(countRST, b.phase)
		}
		b.in.countLayer(streamOnly, b.phase)
	}
}

var errClosed = errors.New("chaos: body closed")

// stopAt tells scan which trigger to look for.
func (b *body) stopAt() int {
	switch {
	case b.f.When.AfterEvents > 0:
		return trigEvents
	case b.f.When.AfterBytes > 0:
		return trigBytes
	case b.f.When.MidEvent != nil:
		return trigMid
	}
	return -1
}

const (
	trigEvents = iota
	trigBytes
	trigMid
)

// scan counts events and bytes in buf and returns the index just after the
// point where trigger trig is met (-1: not met in buf).
func (b *body) scan(buf []byte, trig int) int {
	for i, c := range buf {
		b.bytes++
		if trig == trigBytes && b.bytes == b.f.When.AfterBytes {
			return i + 1
		}
		switch {
		case c == '\n' && b.prevCR:
			b.prevCR = false
			continue
		case c == '\r' || c == '\n':
			b.prevCR = c == '\r'
			if b.lineStart {
				// A blank line: dispatches an event if it had a field.
				if b.fields {
					b.events++
					b.fields = false
					if trig == trigEvents && b.events == b.f.When.AfterEvents {
						return i + 1
					}
				}
			} else if !b.comment {
				b.fields = true
				if trig == trigMid && b.events == *b.f.When.MidEvent {
					return i + 1 // the event's first line is in; its end is not
				}
			}
			b.lineStart, b.comment = true, false
		default:
			b.prevCR = false
			if b.lineStart {
				b.comment = c == ':'
			}
			b.lineStart = false
		}
	}
	return -1
}

// Close implements io.Closer.
func (b *body) Close() error {
	b.mu.Lock()
	already := b.closed
	b.closed = true
	b.wake()
	b.mu.Unlock()
	if already {
		return nil
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	b.in.unregister(b)
	return b.rc.Close()
}
