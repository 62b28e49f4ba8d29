package driver

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// SSE decoding to the WHATWG "event stream interpretation" rules
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
//
//   - lines end in CRLF, LF or CR (a CR at the end of one read and an LF at the
//     start of the next are one line end);
//   - a leading UTF-8 BOM is skipped once;
//   - a line starting with ':' is a comment;
//   - "field: value" strips one space after the colon; a line without a colon
//     is a field with an empty value;
//   - "data" appends value+LF to the data buffer, "event" sets the type,
//     "id" sets the last-event-ID buffer unless the value contains NUL,
//     "retry" sets the reconnection time when the value is all ASCII digits;
//   - a blank line dispatches: the last event ID becomes the buffer's value
//     (even for an event without data), and an event with data is delivered;
//   - at end of stream an unterminated event is discarded (its id is not
//     committed, so a resume never skips a half-received event).

// MaxEventBytes is the default limit on one SSE event (all its lines):
// 16 MiB. A larger event is reported as ErrSSEMalformed.
const MaxEventBytes = 16 << 20

// Event is one dispatched SSE event. Its byte slices alias the decoder's
// buffers and are valid only until the next call to Next.
type Event struct {
	// ID is the last event ID after this event was dispatched (the event's own
	// id, or the one inherited from earlier events; WHATWG semantics).
	ID []byte
	// HasID reports whether this event carried its own id field.
	HasID bool
	// Type is the event field ("" when absent; browsers call that "message").
	Type []byte
	// Data is the data buffer without its trailing LF. An event with empty
	// Data (a priming event, an SEP-1699 close event) carries no message.
	Data []byte
	// Retry is the retry field of this event in ms, or -1 when it had none.
	Retry int
}

// SSEDecoder reads events from an SSE byte stream. It keeps the connection's
// reconnection state (last event ID, retry hint) across Reset, as an
// EventSource does across reconnects. The zero value is not usable; use
// NewSSEDecoder. Not safe for concurrent use.
type SSEDecoder struct {
	r   io.Reader
	buf []byte // read buffer; buf[start:end] is unconsumed
	st  int
	end int
	eof bool
	err error

	bomChecked bool
	skipLF     bool // previous line ended in CR at the end of a read

	data    []byte
	typ     []byte
	idBuf   []byte // last-event-ID buffer (set by id fields)
	lastID  []byte // committed last event ID (set at dispatch)
	hasID   bool   // current event had an id field
	retry   int    // current event's retry field, -1 if none
	fields  int    // fields seen in the current event
	evBytes int    // bytes in the current event

	// RetryMS is the reconnection time in ms from the latest retry field,
	// or -1 when the server never sent one.
	RetryMS int
	// MaxEvent bounds one event's size in bytes; 0 means MaxEventBytes.
	MaxEvent int
}

// NewSSEDecoder returns a decoder reading from r.
func NewSSEDecoder(r io.Reader) *SSEDecoder {
	d := &SSEDecoder{buf: make([]byte, 8192), RetryMS: -1, retry: -1}
	d.r = r
	return d
}

// Start points the decoder at the first connection of a new stream: all
// state is cleared, the last event ID and retry hint included.
func (d *SSEDecoder) Start(r io.Reader) {
	d.Reset(r)
	d.lastID = d.lastID[:0]
	d.idBuf = d.idBuf[:0]
	d.RetryMS = -1
}

// Reset points the decoder at a new stream (a resumed connection) and clears
// the per-stream parser state, keeping the last event ID and retry hint.
func (d *SSEDecoder) Reset(r io.Reader) {
	d.r = r
	d.st, d.end = 0, 0
	d.eof = false
	d.err = nil
	d.bomChecked = false
	d.skipLF = false
	d.data = d.data[:0]
	d.typ = d.typ[:0]
	d.idBuf = append(d.idBuf[:0], d.lastID...)
	d.hasID = false
	d.retry = -1
	d.fields = 0
	d.evBytes = 0
}

// LastEventID is the committed last event ID: the value to send as
// Last-Event-ID when resuming. Empty when no event carried an id.
func (d *SSEDecoder) LastEventID() []byte { return d.lastID }

// AtEOF reports whether the stream's end was read (and no buffered byte is
// left): the connection is free for reuse.
func (d *SSEDecoder) AtEOF() bool { return d.eof && d.err == nil && d.st == d.end }

// Pending reports whether a partial event (fields without the blank line
// that ends it) was being read when the stream ended.
func (d *SSEDecoder) Pending() bool { return d.fields > 0 }

// ErrSSEMalformed reports an event stream the decoder cannot accept (an event
// over the size limit). Most malformed input is not an error under the WHATWG
// rules: unknown fields and bad retry values are ignored.
var ErrSSEMalformed = errors.New("malformed SSE stream")

// Next returns the next dispatched event. Events with empty data are
// returned too (HasID/Retry tell what they carried). At the end of the
// stream it returns io.EOF (an unterminated final event is discarded);
// read errors are returned as they are.
func (d *SSEDecoder) Next() (Event, error) {
	for {
		line, ok, err := d.readLine()
		if err != nil {
			return Event{}, err
		}
		if !ok {
			continue
		}
		if len(line) == 0 {
			if d.fields == 0 {
				d.evBytes = 0
				continue // blank line with nothing pending: nothing to dispatch
			}
			return d.dispatch(), nil
		}
		if line[0] == ':' {
			continue // comment (keep-alives): not a field, dispatches nothing
		}
		d.field(line)
	}
}

func (d *SSEDecoder) dispatch() Event {
	d.lastID = append(d.lastID[:0], d.idBuf...)
	ev := Event{ID: d.lastID, HasID: d.hasID, Type: d.typ, Retry: d.retry}
	if n := len(d.data); n > 0 && d.data[n-1] == '\n' {
		ev.Data = d.data[:n-1]
	} else {
		ev.Data = d.data
	}
	// Buffers are reused on the next call; the caller's slices stay valid
	// until then because we only truncate here.
	d.data = d.data[:0]
	d.typ = d.typ[:0]
	d.hasID = false
	d.retry = -1
	d.fields = 0
	d.evBytes = 0
	return ev
}

func (d *SSEDecoder) field(line []byte) {
	d.fields++
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		d.data = append(d.data, value...)
		d.data = append(d.data, '\n')
	case "event":
		d.typ = append(d.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.idBuf = append(d.idBuf[:0], value...)
			d.hasID = true
		}
	case "retry":
		if n, ok := parseDigits(value); ok {
			d.RetryMS = n
			d.retry = n
		}
	}
}

// parseDigits parses an all-ASCII-digit value (WHATWG: otherwise ignored).
// Values beyond int range saturate.
func parseDigits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (1<<31)/10 {
			n = 1 << 31
			continue
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// readLine returns the next line without its terminator. ok is false when
// the call consumed only a stray LF of a CRLF split across reads or a BOM.
func (d *SSEDecoder) readLine() (line []byte, ok bool, err error) {
	for {
		if d.st < d.end {
			if !d.bomChecked {
				if d.end-d.st < 3 && !d.eof && bytes.HasPrefix([]byte("\xEF\xBB\xBF"), d.buf[d.st:d.end]) {
					if err := d.fill(); err != nil && err != io.EOF {
						return nil, false, err
					}
					continue
				}
				d.bomChecked = true
				if bytes.HasPrefix(d.buf[d.st:d.end], []byte("\xEF\xBB\xBF")) {
					d.st += 3
					continue
				}
			}
			if d.skipLF {
				d.skipLF = false
				if d.buf[d.st] == '\n' {
					d.st++
					continue
				}
			}
			win := d.buf[d.st:d.end]
			i := indexEOL(win)
			if i >= 0 {
				line = win[:i]
				d.st += i + 1
				if win[i] == '\r' {
					if d.st < d.end {
						if d.buf[d.st] == '\n' {
							d.st++
						}
					} else {
						d.skipLF = true
					}
				}
				if d.evBytes += len(line) + 1; d.max() < d.evBytes {
					return nil, false, ErrSSEMalformed
				}
				return line, true, nil
			}
		}
		if d.eof {
			// Unterminated final line: per WHATWG the pending event is
			// discarded, so the line does not matter.
			d.st = d.end
			d.fields = 0
			if d.err != nil {
				return nil, false, d.err
			}
			return nil, false, io.EOF
		}
		if err := d.fill(); err != nil && err != io.EOF {
			return nil, false, err
		}
	}
}

func (d *SSEDecoder) max() int {
	if d.MaxEvent > 0 {
		return d.MaxEvent
	}
	return MaxEventBytes
}

// fill reads more bytes, compacting or growing the buffer. It records EOF and
// read errors in d.eof/d.err; errors other than EOF are also returned so a
// partial line is not mistaken for a complete one.
func (d *SSEDecoder) fill() error {
	if d.st > 0 {
		n := copy(d.buf, d.buf[d.st:d.end])
		d.st, d.end = 0, n
	}
	if d.end == len(d.buf) {
		if len(d.buf) >= d.max()+1 {
			return ErrSSEMalformed
		}
		nb := make([]byte, 2*len(d.buf))
		copy(nb, d.buf[:d.end])
		d.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		if err != nil {
			d.eof = true
			if err != io.EOF {
				d.err = err
				d.fields = 0
				return err
			}
			return io.EOF
		}
		if n > 0 {
			return nil
		}
	}
	d.eof, d.err = true, io.ErrNoProgress
	return io.ErrNoProgress
}

// indexEOL returns the index of the first CR or LF in b, or -1.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	var j int
	if i < 0 {
		j = bytes.IndexByte(b, '\r')
	} else {
		j = bytes.IndexByte(b[:i], '\r')
	}
	if j >= 0 {
		return j
	}
	return i
}

// AppendRetry renders a retry hint for logs: "1500ms" or "none".
func AppendRetry(dst []byte, ms int) []byte {
	if ms < 0 {
		return append(dst, "none"...)
	}
	dst = strconv.AppendInt(dst, int64(ms), 10)
	return append(dst, "ms"...)
}
