package sse

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/units"
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

// MaxEventBytes is the default limit on one SSE event (all its lines, with
// their line ends): 16 MiB. A larger event is reported as ErrEventTooLarge.
const MaxEventBytes = 16 << 20

// SmallBuffer is the size up to which an Decoder keeps its buffers
// between events: 64 KiB. An event that needs more (a line or a field
// longer than that) is a large episode: the decoder calls Reserve, grows
// its buffers, and drops them (calling Release) as soon as the event is
// dispatched, so a decoder holds only small buffers between large events.
const SmallBuffer = 64 << 10

// initialBuffer is the read buffer a decoder starts a stream with. It is
// pooled: a decoder with no stream (Reset(nil)) gives it back, so an idle
// session's decoder holds none.
const initialBuffer = 4 << 10

var decBufPool = sync.Pool{New: func() any { return new([initialBuffer]byte) }}

// ErrMalformed reports an event stream the decoder cannot accept (an event
// over the size limit). Most malformed input is not an error under the WHATWG
// rules: unknown fields and bad retry values are ignored.
var ErrMalformed = errors.New("malformed SSE stream")

// ErrEventTooLarge reports an SSE event larger than the decoder's MaxEvent
// (the max_event_bytes setting). Errors wrapping it also wrap
// ErrMalformed; their text names the limit and the setting that raises
// it ("SSE event larger than max_event_bytes 16 MiB; raise it with
// driver.Config.MaxEventBytes": internal/setting, said as the front end
// names it — mcpbench's CLI: --max-event-bytes).
var ErrEventTooLarge = errors.New("SSE event too large")

// eventTooLargeError is the error of an event over MaxEvent.
type eventTooLargeError struct{ limit int }

func (e *eventTooLargeError) Error() string {
	return "SSE event larger than max_event_bytes " + units.Size(e.limit).String() + "; raise it with " + setting.MaxEventBytes.String()
}

func (e *eventTooLargeError) Unwrap() []error { return []error{ErrEventTooLarge, ErrMalformed} }

// Event is one dispatched SSE event. Its byte slices alias the decoder's
// buffers and are valid only until the next call to Next, Reset or Start.
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

// Decoder reads events from an SSE byte stream. It keeps the connection's
// reconnection state (last event ID, retry hint) across Reset, as an
// EventSource does across reconnects. The zero value is not usable; use
// NewDecoder. Not safe for concurrent use.
//
// Cost: linear in the bytes read, however the stream is split into reads
// (each byte is searched for a line end once and copied at most a constant
// number of times).
//
// Memory: between events a decoder holds small buffers (a read buffer of
// 8 KiB that may grow to SmallBuffer, and the fields of one event). A data
// line longer than the read buffer goes into the data buffer as it is read
// (the read buffer stays small; the data buffer doubles to 4 MiB, then
// takes MaxEvent at once); any other long line grows the read buffer up to
// MaxEvent (never beyond: a line that does not fit is over the limit), and
// the event's fields (data, type, id) take up to about 1.25×MaxEvent
// together, so one decoder holds at most about 2.25×MaxEvent at any time,
// plus the last event ID kept for resuming (as long as the server's
// longest id). When the large event is dispatched its field buffers pass
// to the returned Event (garbage once the caller drops it); at the next
// call (Next, Reset, Start), when the caller is done with the event, the
// decoder returns to its small buffers and the episode ends (Release); the
// read buffer follows as soon as the input left in it fits the small one
// (at once, unless the next large event is already buffered).
type Decoder struct {
	r   io.Reader
	buf []byte // read buffer; buf[st:end] is unconsumed
	st  int
	end int
	eof bool
	err error

	// Line-end search memo, absolute indexes into buf, so that no byte is
	// searched twice however small the reads: when lf >= st, buf[lf] is the
	// first LF at or after st; otherwise buf[st:lfScan] holds no LF.
	// buf[st:crScan] holds no CR.
	lf     int
	lfScan int
	crScan int

	bomChecked bool
	skipLF     bool // previous line ended in CR at the end of a read
	spill      bool // a data line longer than the read buffer is being read: its value goes to data as it comes
	partial    bool // the stream ended inside an event

	data    []byte
	typ     []byte
	pendID  []byte // id field of the current event (valid when hasID)
	lastID  []byte // committed last event ID (set at dispatch)
	hasID   bool   // current event had an id field
	retry   int    // current event's retry field, -1 if none
	fields  int    // fields seen in the current event
	evBytes int    // bytes in the current event

	large     bool   // a large episode is under way
	smallBuf  []byte // the small read buffer, kept aside during a large episode
	smallData []byte // the small data buffer, kept aside during a large episode
	smallSize int    // 0 means SmallBuffer (tests lower it)
	work      int64  // bytes searched or copied: the decoder's cost, for tests

	// progress counts the units of a stream read whole: dispatched events,
	// and comments or blank lines between events (keep-alives). Bytes of
	// an event not yet complete do not count. The idle watch (see
	// Config.StreamIdleTimeout) re-arms when it moves.
	progress uint64

	// RetryMS is the reconnection time in ms from the latest retry field,
	// or -1 when the server never sent one.
	RetryMS int
	// MaxEvent bounds one event's size in bytes (all its lines with their
	// line ends, comments inside the event included); 0 means MaxEventBytes.
	// A larger event fails Next with ErrEventTooLarge.
	MaxEvent int

	// Reserve, when set, is called before the decoder's buffers first grow
	// beyond SmallBuffer for a large event (once per large episode), so
	// that a process-wide memory budget can refuse it: its error is
	// returned by Next (wrapped with %w) and the stream ends there (Reset
	// or Start to reuse the decoder).
	Reserve func() error
	// Release, when set, is called exactly once for each Reserve that
	// returned nil, when the large episode ends: at the call after the
	// one that returned the large event (its data is the episode's buffer,
	// so the reservation lasts while the caller holds it), once no large
	// input is left in the read buffer; on Reset or Start; or when Next
	// returns an error (io.EOF included).
	// Both are called synchronously from Next, Reset or Start, in the
	// caller's goroutine.
	Release func()
	// ReturnIdle makes Next return ErrIdle in place of a read that finds
	// nothing left in the read buffer (every byte read so far consumed),
	// once per such read: the caller waits for input without the decoder's
	// stack or read buffer (httpclient.IdleWaiter), and calls Next again,
	// which then reads. The read buffer goes back to the pool meanwhile, so
	// a long-lived stream that mostly waits (a GET stream) holds none. Set
	// by the caller; Reset and Start keep it.
	ReturnIdle bool
	idled      bool // ErrIdle was returned: the next fill reads
}

// ErrIdle is Next's answer, with ReturnIdle set, when it would have to wait
// for input: the decoder is intact (an event may be under way); call Next
// again once input is there.
var ErrIdle = errors.New("sse: waiting for input")

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	d := &Decoder{RetryMS: -1, retry: -1, lf: -1}
	d.r = r
	return d
}

// Start points the decoder at the first connection of a new stream: all
// state is cleared, the last event ID and retry hint included.
func (d *Decoder) Start(r io.Reader) {
	d.Reset(r)
	if cap(d.lastID) > d.small() {
		d.lastID = nil
	}
	d.lastID = d.lastID[:0]
	d.RetryMS = -1
}

// Reset points the decoder at a new stream (a resumed connection) and clears
// the per-stream parser state, keeping the last event ID and retry hint.
// A large episode ends here (Release).
func (d *Decoder) Reset(r io.Reader) {
	d.r = r
	defer d.park()
	d.st, d.end = 0, 0
	d.lf, d.lfScan, d.crScan = -1, 0, 0
	d.eof = false
	d.err = nil
	d.idled = false
	d.bomChecked = false
	d.skipLF = false
	d.spill = false
	d.partial = false
	d.data = d.data[:0]
	d.typ = d.typ[:0]
	d.hasID = false
	d.retry = -1
	d.fields = 0
	d.evBytes = 0
	d.leaveLarge()
}

// streamDecBuffer is the read buffer a GET stream's decoder starts with:
// the stream lives as long as its session and carries small
// notifications; a larger event grows the buffer as for any decoder.
const streamDecBuffer = 512

// NewStreamDecoder is a decoder for a long-lived stream of small events (a
// GET stream): its read buffer is its own, not pooled, and starts at 512
// bytes; a larger event grows it as for any decoder.
func NewStreamDecoder() *Decoder {
	d := NewDecoder(nil)
	d.buf = make([]byte, streamDecBuffer)
	return d
}

// parkedData is the most data buffer a decoder with no stream keeps.
const parkedData = 1 << 10

// park gives the read buffer back to the pool when the decoder has no
// stream (Reset(nil)); fill takes one again.
func (d *Decoder) park() {
	if d.r != nil || d.large {
		return
	}
	if len(d.buf) == initialBuffer {
		decBufPool.Put((*[initialBuffer]byte)(d.buf))
		d.buf = nil
	}
	// An answer's large event (a tools/list) would otherwise stay held by
	// every idle session's decoder until its next one.
	if cap(d.data) > parkedData {
		d.data = nil
	}
}

// Progress counts the units of the stream read whole so far: dispatched
// events, and comments or blank lines between events (keep-alives); bytes
// of an event not yet complete do not count. An idle watch re-arms when it
// moves. Like every method, not safe for concurrent use with Next.
func (d *Decoder) Progress() uint64 { return d.progress }

// LastEventID is the committed last event ID: the value to send as
// Last-Event-ID when resuming. Empty when no event carried an id.
func (d *Decoder) LastEventID() []byte { return d.lastID }

// AtEOF reports whether the stream's end was read (and no buffered byte is
// left): the connection is free for reuse.
func (d *Decoder) AtEOF() bool { return d.eof && d.err == nil && d.st == d.end }

// Between reports whether the decoder holds nothing of an event: no byte
// read from the source is left unconsumed, and no field of an event not
// yet dispatched was read (the next event's bytes are all still to come).
func (d *Decoder) Between() bool { return d.st == d.end && d.fields == 0 && d.evBytes == 0 }

// Pending reports whether a partial event (fields, or a line, without the
// blank line that ends the event) was being read when the stream ended.
func (d *Decoder) Pending() bool { return d.partial }

// Next returns the next dispatched event. Events with empty data are
// returned too (HasID/Retry tell what they carried). At the end of the
// stream it returns io.EOF (an unterminated final event is discarded);
// read errors are returned as they are, after the complete events read
// before them. An event over MaxEvent fails with an error wrapping
// ErrEventTooLarge and ErrMalformed; a refused Reserve with its error.
// After an error every call returns it again until Reset or Start.
func (d *Decoder) Next() (Event, error) {
	for {
		if d.large && d.fields == 0 {
			d.leaveLarge() // the previous event is gone: drop its buffers
		}
		line, err := d.readLine()
		if err != nil {
			d.leaveLarge()
			return Event{}, err
		}
		if len(line) == 0 {
			d.progress++
			if d.fields == 0 {
				d.evBytes = 0
				continue // blank line with nothing pending: nothing to dispatch
			}
			return d.dispatch(), nil
		}
		if line[0] == ':' {
			if d.fields == 0 {
				d.progress++  // a keep-alive: the server is there
				d.evBytes = 0 // a keep-alive between events holds nothing
			}
			continue // comment (keep-alives): not a field, dispatches nothing
		}
		if err := d.field(line); err != nil {
			d.fail(err)
			d.leaveLarge()
			return Event{}, err
		}
	}
}

func (d *Decoder) dispatch() Event {
	if d.hasID {
		d.lastID = append(d.lastID[:0], d.pendID...)
	}
	ev := Event{ID: d.lastID, HasID: d.hasID, Type: d.typ, Retry: d.retry}
	if n := len(d.data); n > 0 && d.data[n-1] == '\n' {
		ev.Data = d.data[:n-1]
	} else {
		ev.Data = d.data
	}
	// Buffers are reused on the next call; the caller's slices stay valid
	// until then because we only truncate here (or, for a large event, hand
	// the buffers over to the caller).
	d.data = d.data[:0]
	d.typ = d.typ[:0]
	d.hasID = false
	d.retry = -1
	d.fields = 0
	d.evBytes = 0
	// A large event's buffers stay reserved while the caller holds the
	// event: the next Next (or Reset, Start) ends the episode (Release).
	// Releasing here let another session reserve the same bytes while
	// this event's data was still being handled: 60 MiB events held 144
	// MB against a 128 MiB budget.
	return ev
}

func (d *Decoder) field(line []byte) error {
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
		if len(d.data)+len(value)+1 > cap(d.data) {
			if err := d.room(&d.data, len(value)+1); err != nil {
				return err
			}
		}
		d.data = append(d.data, value...)
		d.data = append(d.data, '\n')
	case "event":
		if len(value) > cap(d.typ) {
			if err := d.room(&d.typ, len(value)); err != nil {
				return err
			}
		}
		d.typ = append(d.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			if len(value) > cap(d.pendID) {
				if err := d.room(&d.pendID, len(value)); err != nil {
					return err
				}
			}
			d.pendID = append(d.pendID[:0], value...)
			d.hasID = true
		}
	case "retry":
		if n, ok := parseDigits(value); ok {
			d.RetryMS = n
			d.retry = n
		}
	}
	return nil
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
