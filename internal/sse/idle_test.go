package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// idleChunks returns one chunk per Read, then io.EOF.
type idleChunks struct{ chunks []string }

func (r *idleChunks) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	if n < len(r.chunks[0]) {
		r.chunks[0] = r.chunks[0][n:]
	} else {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// With ReturnIdle, Next answers ErrIdle (once) wherever it would read with
// nothing left in its buffer — between events, inside an event, after a
// keep-alive — and holds no read buffer then; called again, it reads and
// decodes as without ReturnIdle, the split event included.
func TestReturnIdle(t *testing.T) {
	r := &idleChunks{chunks: []string{"id: 1\ndata: a\n", "\n", ": keep-alive\n\n", "retry: 30\ndata: x\n\n", "data: y\n\ndata: z"}}
	d := NewStreamDecoder()
	d.Reset(r)
	d.ReturnIdle = true
	var got []string
	for i := 0; i < 20; i++ {
		e, err := d.Next()
		switch {
		case errors.Is(err, ErrIdle):
			if d.buf != nil {
				t.Fatalf("step %d: idle with a read buffer of %d bytes", i, len(d.buf))
			}
			got = append(got, "idle")
			continue
		case err == io.EOF:
			got = append(got, "EOF")
		case err != nil:
			t.Fatalf("step %d: %v", i, err)
		default:
			got = append(got, "event "+string(e.ID)+" "+string(e.Data))
			continue
		}
		break
	}
	want := "idle,idle,event 1 a,idle,idle,event 1 x,idle,event 1 y,EOF"
	if s := strings.Join(got, ","); s != want {
		t.Fatalf("got  %s\nwant %s", s, want)
	}
	if d.RetryMS != 30 || string(d.LastEventID()) != "1" || !d.Pending() {
		t.Fatalf("retry %d last id %q pending %v: want 30, 1, true (data: z unterminated)", d.RetryMS, d.LastEventID(), d.Pending())
	}
}

// Without ReturnIdle, Next never answers ErrIdle.
func TestNoReturnIdle(t *testing.T) {
	d := NewStreamDecoder()
	d.Reset(&idleChunks{chunks: []string{"data: a\n", "\n", "data: b\n\n"}})
	for _, want := range []string{"a", "b"} {
		e, err := d.Next()
		if err != nil || string(e.Data) != want {
			t.Fatalf("Next = %q, %v; want %q", e.Data, err, want)
		}
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("end: %v, want EOF", err)
	}
}
