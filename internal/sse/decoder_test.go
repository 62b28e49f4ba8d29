package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ev is a comparable copy of an Event.
type ev struct {
	ID    string
	HasID bool
	Type  string
	Data  string
	Retry int
}

type decoded struct {
	Events []ev
	LastID string
	Retry  int
	Err    string
}

func decodeAll(r io.Reader) decoded { return decodeWith(NewDecoder(r)) }

// decodeWith reads d to its end (or first error).
func decodeWith(d *Decoder) decoded {
	var out decoded
	for {
		e, err := d.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				out.Err = err.Error()
			}
			break
		}
		out.Events = append(out.Events, ev{string(e.ID), e.HasID, string(e.Type), string(e.Data), e.Retry})
	}
	out.LastID = string(d.LastEventID())
	out.Retry = d.RetryMS
	return out
}

// refDecode is a plain, slow reading of the WHATWG rules, the oracle for the
// fuzz target.
func refDecode(s string) decoded { return refDecodeMax(s, MaxEventBytes) }

// refDecodeMax is refDecode with the event size limit: an event's lines,
// each counted with one byte for its line end, may hold max bytes; blank
// lines and comments outside an event count for nothing; an unterminated
// last line over the limit is an error too (it can never fit).
func refDecodeMax(s string, max int) decoded {
	s = strings.TrimPrefix(s, "\uFEFF")
	var lines []string
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	tail := s // an unterminated last line: never a field
	out := decoded{Retry: -1}
	var data, typ, idBuf, lastID string
	hasData, hasID, fields, retry, evBytes := false, false, 0, -1, 0
	tooLarge := (&eventTooLargeError{max}).Error()
	for _, l := range lines {
		if evBytes += len(l) + 1; evBytes > max {
			out.Err = tooLarge
			break
		}
		if l == "" {
			evBytes = 0
			if fields == 0 {
				continue
			}
			lastID = idBuf
			d := data
			if hasData {
				d = strings.TrimSuffix(d, "\n")
			}
			out.Events = append(out.Events, ev{lastID, hasID, typ, d, retry})
			data, typ, hasData, hasID, fields, retry = "", "", false, false, 0, -1
			continue
		}
		if l[0] == ':' {
			if fields == 0 {
				evBytes = 0
			}
			continue
		}
		fields++
		name, value := l, ""
		if i := strings.IndexByte(l, ':'); i >= 0 {
			name, value = l[:i], strings.TrimPrefix(l[i+1:], " ")
		}
		switch name {
		case "data":
			data += value + "\n"
			hasData = true
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				idBuf, hasID = value, true
			}
		case "retry":
			if n, ok := parseDigits([]byte(value)); ok {
				out.Retry, retry = n, n
			}
		}
	}
	if out.Err == "" && tail != "" && evBytes+len(tail)+1 > max {
		out.Err = tooLarge
	}
	out.LastID = lastID
	return out
}

func TestSSEDecoder(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want decoded
	}{
		{"basic", "id: 1\nevent: message\ndata: {\"a\":1}\n\n",
			decoded{Events: []ev{{"1", true, "message", `{"a":1}`, -1}}, LastID: "1", Retry: -1}},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n",
			decoded{Events: []ev{{"", false, "", "a\nb\n c", -1}}, Retry: -1}},
		{"CRLF and CR", "id: x\r\ndata: 1\r\rdata: 2\r\n\r\n",
			decoded{Events: []ev{{"x", true, "", "1", -1}, {"x", false, "", "2", -1}}, LastID: "x", Retry: -1}},
		{"BOM skipped once", "\uFEFFdata: a\n\n\uFEFFdata: b\n\n",
			decoded{Events: []ev{{"", false, "", "a", -1}, {"", false, "", "", -1}}, Retry: -1}},
		{"comment only dispatches nothing", ": keepalive\n\n: more\n\ndata: x\n\n",
			decoded{Events: []ev{{"", false, "", "x", -1}}, Retry: -1}},
		{"priming event: id and empty data", "id: s_0\ndata:\n\n",
			decoded{Events: []ev{{"s_0", true, "", "", -1}}, LastID: "s_0", Retry: -1}},
		{"named prime and close", "event: prime\nid: s_0\n\nevent: close\nretry: 1500\n\n",
			decoded{Events: []ev{{"s_0", true, "prime", "", -1}, {"s_0", false, "close", "", 1500}}, LastID: "s_0", Retry: 1500}},
		{"retry must be digits", "retry: 12a\ndata: a\n\nretry: 300\ndata: b\n\n",
			decoded{Events: []ev{{"", false, "", "a", -1}, {"", false, "", "b", 300}}, Retry: 300}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n",
			decoded{Events: []ev{{"1", true, "", "a", -1}, {"1", false, "", "b", -1}}, LastID: "1", Retry: -1}},
		{"empty id resets", "id: 1\ndata: a\n\nid\ndata: b\n\n",
			decoded{Events: []ev{{"1", true, "", "a", -1}, {"", true, "", "b", -1}}, Retry: -1}},
		{"field without colon", "data\ndata\n\n",
			decoded{Events: []ev{{"", false, "", "\n", -1}}, Retry: -1}},
		{"unknown field ignored", "foo: bar\ndata: a\n\n",
			decoded{Events: []ev{{"", false, "", "a", -1}}, Retry: -1}},
		{"unterminated event discarded, id not committed", "id: 1\ndata: a\n\nid: 2\ndata: b\n",
			decoded{Events: []ev{{"1", true, "", "a", -1}}, LastID: "1", Retry: -1}},
		{"space only stripped once", "data:   x\n\n",
			decoded{Events: []ev{{"", false, "", "  x", -1}}, Retry: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"byte-at-a-time", iotest.OneByteReader(strings.NewReader(tt.in))},
				{"half", iotest.HalfReader(strings.NewReader(tt.in))},
			} {
				if diff := cmp.Diff(tt.want, decodeAll(r.r)); diff != "" {
					t.Errorf("%s: decode (-want +got):\n%s", r.name, diff)
				}
			}
			if diff := cmp.Diff(tt.want, refDecode(tt.in)); diff != "" {
				t.Errorf("reference decoder disagrees with the table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSEDecoderResetKeepsResumeState(t *testing.T) {
	d := NewDecoder(strings.NewReader("retry: 250\nid: s_3\ndata: x\n\nid: s_4\ndata: y"))
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	if got := string(d.LastEventID()); got != "s_3" {
		t.Fatalf("LastEventID after a cut mid-event = %q, want s_3 (the half event must not count)", got)
	}
	d.Reset(strings.NewReader("id: s_4\ndata: y\n\n"))
	if d.RetryMS != 250 || string(d.LastEventID()) != "s_3" {
		t.Fatalf("Reset lost state: retry %d id %q", d.RetryMS, d.LastEventID())
	}
	e, err := d.Next()
	if err != nil || string(e.ID) != "s_4" {
		t.Fatalf("after Reset: %v %q", err, e.ID)
	}
	d.Start(strings.NewReader(""))
	if d.RetryMS != -1 || len(d.LastEventID()) != 0 {
		t.Fatalf("Start kept state: retry %d id %q", d.RetryMS, d.LastEventID())
	}
}

func TestSSEDecoderLimits(t *testing.T) {
	d := NewDecoder(strings.NewReader("data: " + strings.Repeat("x", 5000) + "\n\n"))
	d.MaxEvent = 1024
	if _, err := d.Next(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("oversized event: err = %v, want ErrMalformed", err)
	}
	d = NewDecoder(strings.NewReader(strings.Repeat("\n", 100000) + "data: ok\n\n"))
	d.MaxEvent = 1024
	if e, err := d.Next(); err != nil || string(e.Data) != "ok" {
		t.Fatalf("blank lines must not count toward the event limit: %v %q", err, e.Data)
	}
	boom := errors.New("boom")
	d = NewDecoder(io.MultiReader(strings.NewReader("id: 7\ndata: a\n\ndata: half"), iotest.ErrReader(boom)))
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Next(); !errors.Is(err, boom) {
		t.Fatalf("read error: got %v, want boom", err)
	}
	if string(d.LastEventID()) != "7" {
		t.Fatalf("LastEventID = %q", d.LastEventID())
	}
}

// chunkReader returns the input in chunks whose sizes come from sizes.
type chunkReader struct {
	s     string
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%17 + 1
		c.i++
	}
	n = min(n, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// FuzzDecoder checks the decoder against the reference reading of the
// WHATWG rules, with the input split into arbitrary read chunks, a small
// event limit (so the limit's errors are checked too) and small buffer sizes
// (so inputs of a few bytes are large events): the Reserve/Release hooks must
// balance, a refused Reserve must stop the stream cleanly after a prefix of
// the events, and buffers must be small again at the end.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		"id: 1\nevent: message\ndata: {}\n\n",
		"\uFEFFdata: a\r\ndata: b\r\rretry: 10\n\n",
		"event: prime\nid: a_0\ndata:\n\nevent: close\nretry: 1500\n\n",
		": c\n\nid\ndata\n\n",
		"id: x\x00y\ndata: z\n\n",
		"data: a\r",
		"retry: 99999999999999999999\ndata: b\n\n",
		"data: " + strings.Repeat("long line ", 20) + "\nid: " + strings.Repeat("i", 40) + "\n\ndata: short\n\n",
		"event: " + strings.Repeat("t", 50) + "\ndata: x\n\n: " + strings.Repeat("c", 70) + "\n\n",
	} {
		f.Add(s, []byte{1, 5, 3}, uint16(0), uint8(0), uint8(0))
		f.Add(s, []byte{16, 2}, uint16(40), uint8(16), uint8(0))
		f.Add(s, []byte{7}, uint16(90), uint8(8), uint8(2))
	}
	f.Fuzz(func(t *testing.T, in string, sizes []byte, maxEvent uint16, small uint8, refuse uint8) {
		d := NewDecoder(&chunkReader{s: in, sizes: sizes})
		limit := MaxEventBytes
		if maxEvent > 0 {
			limit = int(maxEvent)
			d.MaxEvent = limit
		}
		if small > 0 {
			d.smallSize = 8 + int(small)%57
			d.buf = make([]byte, 4+int(small)%5)
		}
		errRefused := errors.New("budget exhausted")
		calls, reserved, released := 0, 0, 0
		d.Reserve = func() error {
			if reserved != released {
				t.Fatalf("Reserve called again inside a large episode (%d reserved, %d released)", reserved, released)
			}
			if calls++; calls == int(refuse) {
				return errRefused // refuse the refuse-th large episode
			}
			reserved++
			return nil
		}
		d.Release = func() {
			released++
			if released != reserved {
				t.Fatalf("Release without a Reserve (%d reserved, %d released)", reserved, released)
			}
		}
		got := decodeWith(d)
		if reserved != released {
			t.Fatalf("after the stream: %d reserved, %d released", reserved, released)
		}
		if sm := d.small(); d.large || cap(d.buf) > sm || cap(d.data) > sm || cap(d.typ) > sm || cap(d.pendID) > sm {
			t.Fatalf("buffers not small at the end: large %v buf %d data %d typ %d id %d (small %d)",
				d.large, cap(d.buf), cap(d.data), cap(d.typ), cap(d.pendID), sm)
		}
		want := refDecodeMax(in, limit)
		if strings.Contains(got.Err, errRefused.Error()) {
			// The stream ended where Reserve refused: what came before
			// must be what the reference delivers first.
			if len(got.Events) > len(want.Events) {
				t.Fatalf("refused Reserve: %d events, reference has %d", len(got.Events), len(want.Events))
			}
			if diff := cmp.Diff(want.Events[:len(got.Events)], got.Events, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("decode(%q) before the refusal differs from the reference (-want +got):\n%s", in, diff)
			}
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decode(%q) limit %d differs from the reference (-want +got):\n%s", in, limit, diff)
		}
	})
}

func TestSSEDecoderTooLarge(t *testing.T) {
	d := NewDecoder(strings.NewReader("data: ok\n\ndata: " + strings.Repeat("x", 5000) + "\n\ndata: after\n\n"))
	d.MaxEvent = 1024
	if e, err := d.Next(); err != nil || string(e.Data) != "ok" {
		t.Fatalf("first event: %v %q", err, e.Data)
	}
	_, err := d.Next()
	if !errors.Is(err, ErrEventTooLarge) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("oversized event: err = %v, want ErrEventTooLarge and ErrMalformed", err)
	}
	if got, want := err.Error(), "SSE event larger than max_event_bytes 1KiB; raise it with driver.Config.MaxEventBytes"; got != want {
		t.Fatalf("error text %q, want %q", got, want)
	}
	if _, err2 := d.Next(); err2 != err {
		t.Fatalf("the error must stick until Reset: got %v", err2)
	}
	d.Reset(strings.NewReader("data: again\n\n"))
	if e, err := d.Next(); err != nil || string(e.Data) != "again" {
		t.Fatalf("after Reset: %v %q", err, e.Data)
	}

	// The default limit is named too.
	if got, want := (&eventTooLargeError{MaxEventBytes}).Error(), "SSE event larger than max_event_bytes 16MiB; raise it with driver.Config.MaxEventBytes"; got != want {
		t.Fatalf("default limit text %q, want %q", got, want)
	}
}

// endlessReader returns c forever, counting bytes; the test fails if the
// decoder reads far past the point where the event was already too large.
type endlessReader struct {
	c     byte
	n     int
	limit int
	t     *testing.T
}

func (r *endlessReader) Read(p []byte) (int, error) {
	if r.n > r.limit {
		r.t.Fatalf("decoder read %d bytes of a line over its limit", r.n)
	}
	n := min(len(p), 4096)
	for i := range n {
		p[i] = r.c
	}
	r.n += n
	return n, nil
}

func TestSSEDecoderEndlessLine(t *testing.T) {
	const limit = 1 << 20
	r := &endlessReader{c: 'x', limit: 2 * limit, t: t}
	d := NewDecoder(r)
	d.MaxEvent = limit
	_, err := d.Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("endless line: err = %v, want ErrEventTooLarge", err)
	}
	if r.n > limit+4096 {
		t.Fatalf("read %d bytes, want at most the limit plus one read (%d)", r.n, limit+4096)
	}
	if len(d.buf) > limit {
		t.Fatalf("read buffer grew to %d bytes, beyond MaxEvent %d", len(d.buf), limit)
	}
	if cap(d.buf) > SmallBuffer || d.large {
		t.Fatalf("buffers not dropped after the error: buf %d large %v", cap(d.buf), d.large)
	}
}

// TestSSEDecoderReadErrorAfterData: bytes delivered with a read error are
// decoded before the error is reported (io.Reader contract).
func TestSSEDecoderReadErrorAfterData(t *testing.T) {
	boom := errors.New("boom")
	d := NewDecoder(iotest.DataErrReader(io.MultiReader(strings.NewReader("id: 1\ndata: a\n\ndata: b"), iotest.ErrReader(boom))))
	e, err := d.Next()
	if err != nil || string(e.Data) != "a" {
		t.Fatalf("event before the error: %v %q", err, e.Data)
	}
	if _, err := d.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if !d.Pending() || string(d.LastEventID()) != "1" {
		t.Fatalf("Pending %v LastEventID %q, want true and 1", d.Pending(), d.LastEventID())
	}
	if _, err := d.Next(); !errors.Is(err, boom) || !d.Pending() {
		t.Fatalf("again: %v, Pending %v; want boom and true", err, d.Pending())
	}
	d.Reset(strings.NewReader("data: x\n\n"))
	if d.Pending() {
		t.Fatal("Pending after Reset")
	}
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	if d.Pending() {
		t.Fatal("Pending after a stream that ended between events")
	}
}

// decodeWork decodes stream read by r and returns the decoder's work
// counter (bytes searched or copied) and the number of events.
func decodeWork(t *testing.T, r io.Reader) (int64, int) {
	t.Helper()
	d := NewDecoder(r)
	n := 0
	for {
		_, err := d.Next()
		if err == io.EOF {
			return d.work, n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// TestSSEDecoderLinear proves, without timing, that decoding cost is linear
// in the bytes read for any chunking: the work counter (every byte the
// decoder searches or copies) of a 4 MiB line read one byte at a time is
// about 4 times that of a 1 MiB line, not 16 times, and a small constant per
// byte. The decoder before this test searched the whole pending line after
// every read (quadratic).
func TestSSEDecoderLinear(t *testing.T) {
	t.Parallel()
	line := func(n int) string { return "data: " + strings.Repeat("x", n) + "\n\n" }
	small, big := line(1<<20), line(4<<20)
	ws, n1 := decodeWork(t, &chunkReader{s: small})
	wb, n2 := decodeWork(t, &chunkReader{s: big})
	if n1 != 1 || n2 != 1 {
		t.Fatalf("events: %d and %d, want 1", n1, n2)
	}
	if ratio := float64(wb) / float64(ws); ratio < 3.5 || ratio > 4.5 {
		t.Fatalf("work for 4 MiB / 1 MiB = %.2f (%d / %d), want about 4 (linear)", ratio, wb, ws)
	}
	if perByte := float64(wb) / float64(len(big)); perByte > 6 {
		t.Fatalf("work per byte %.2f, want a small constant", perByte)
	}

	// Other shapes: many events in 1-byte reads, CR-only line ends (an LF
	// search finds nothing and must not be repeated for every line), and
	// reads of awkward sizes.
	var ev, cr strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&ev, "id: %d\ndata: {\"progress\":%d}\n\n", i, i)
		fmt.Fprintf(&cr, "id: %d\rdata: {\"progress\":%d}\r\r", i, i)
	}
	for _, c := range []struct {
		name string
		r    io.Reader
		n    int
	}{
		{"events 1-byte", &chunkReader{s: ev.String()}, ev.Len()},
		{"events odd reads", &chunkReader{s: ev.String(), sizes: []byte{16, 3, 9, 0}}, ev.Len()},
		{"CR-only whole", strings.NewReader(cr.String()), cr.Len()},
		{"CR-only 1-byte", &chunkReader{s: cr.String()}, cr.Len()},
	} {
		w, events := decodeWork(t, c.r)
		if events != 20000 {
			t.Fatalf("%s: %d events", c.name, events)
		}
		if perByte := float64(w) / float64(c.n); perByte > 4 {
			t.Errorf("%s: work per byte %.2f, want a small constant", c.name, perByte)
		}
	}
}

// hookCounter counts Reserve and Release calls and checks their order.
type hookCounter struct {
	t                  *testing.T
	reserved, released int
	refuseAt           int // refuse the n-th Reserve (1-based); 0 never
	calls              int
}

var errBudget = errors.New("memory budget exhausted")

func (h *hookCounter) attach(d *Decoder) {
	d.Reserve = func() error {
		h.calls++
		if h.reserved != h.released {
			h.t.Fatalf("Reserve inside a large episode")
		}
		if h.calls == h.refuseAt {
			return errBudget
		}
		h.reserved++
		return nil
	}
	d.Release = func() {
		h.released++
		if h.released > h.reserved {
			h.t.Fatalf("Release without Reserve")
		}
	}
}

func (h *hookCounter) check(d *Decoder, reserved, released int) {
	h.t.Helper()
	if h.reserved != reserved || h.released != released {
		h.t.Fatalf("reserved %d released %d, want %d and %d", h.reserved, h.released, reserved, released)
	}
	if reserved == released {
		if sm := SmallBuffer; d.large || cap(d.buf) > sm || cap(d.data) > sm || cap(d.typ) > sm || cap(d.pendID) > sm {
			h.t.Fatalf("buffers not small: large %v buf %d data %d typ %d id %d", d.large, cap(d.buf), cap(d.data), cap(d.typ), cap(d.pendID))
		}
	}
}

// TestSSEDecoderShrinks: after a 5 MiB event the decoder is back to small
// buffers right at dispatch (its event keeps the big ones), with exactly one
// Reserve and one Release; the event's data is intact.
func TestSSEDecoderShrinks(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("y", 5<<20)
	for _, r := range []struct {
		name string
		r    func(string) io.Reader
	}{
		{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
		{"odd reads", func(s string) io.Reader { return &chunkReader{s: s, sizes: []byte{255, 7, 12}} }},
		{"1-byte", func(s string) io.Reader { return &chunkReader{s: s} }},
	} {
		t.Run(r.name, func(t *testing.T) {
			in := "id: 1\ndata: small\n\nid: 2\nevent: big\ndata: " + big + "\n\ndata: after\n\n"
			d := NewDecoder(r.r(in))
			h := &hookCounter{t: t}
			h.attach(d)
			if e, err := d.Next(); err != nil || string(e.Data) != "small" {
				t.Fatalf("small event: %v %q", err, e.Data)
			}
			h.check(d, 0, 0)
			e, err := d.Next()
			if err != nil || len(e.Data) != len(big) || string(e.Data) != big || string(e.ID) != "2" || string(e.Type) != "big" {
				t.Fatalf("big event: %v, %d bytes, id %q type %q", err, len(e.Data), e.ID, e.Type)
			}
			// Still reserved while the caller holds the event (its data is
			// the large buffer); the next call drops it: nothing else is
			// pending.
			h.check(d, 1, 0)
			if e, err := d.Next(); err != nil || string(e.Data) != "after" || string(e.ID) != "2" {
				t.Fatalf("event after: %v %q %q", err, e.Data, e.ID)
			}
			if _, err := d.Next(); err != io.EOF {
				t.Fatalf("end: %v", err)
			}
			h.check(d, 1, 1)
		})
	}

	// Two large events in one read: the episode lasts while large input is
	// buffered, and ends once it is consumed. (Their long lines are
	// comments: a long data line goes to the data buffer as it is read,
	// TestSSEDecoderLongDataLineReadInPieces, so only other lines grow the
	// read buffer.)
	in := ": " + big + "\ndata: " + big[:4] + "\n\n: " + big + "\ndata: " + big[:4] + "\n\ndata: end\n\n"
	d := NewDecoder(strings.NewReader(in))
	h := &hookCounter{t: t}
	h.attach(d)
	for i, want := range []int{4, 4, 3} {
		e, err := d.Next()
		if err != nil || len(e.Data) != want {
			t.Fatalf("event %d: %v, %d bytes", i, err, len(e.Data))
		}
		if i == 0 {
			// The read buffer grew to 8 MiB and the read that filled it
			// brought 3 MiB of the second event.
			if !d.large || d.end-d.st <= SmallBuffer {
				t.Fatalf("test premise: large %v, %d bytes buffered", d.large, d.end-d.st)
			}
			h.check(d, 1, 0)
			// The event took its data buffer along: the decoder holds
			// only the read buffer while the episode goes on.
			if cap(d.data) > SmallBuffer || len(d.buf) > 8<<20 {
				t.Fatalf("during the episode: data %d, read buffer %d", cap(d.data), len(d.buf))
			}
		}
	}
	h.check(d, 1, 1)
}

// TestSSEDecoderHooksBalanced runs many streams (large and small events,
// every end: EOF, read error, over the limit, Reset mid-episode, Start, a
// refused Reserve) and checks Reserve and Release balance exactly.
func TestSSEDecoderHooksBalanced(t *testing.T) {
	boom := errors.New("boom")
	big := "data: " + strings.Repeat("z", 200<<10) + "\n"
	longID := "id: " + strings.Repeat("i", 100<<10) + "\n"
	longType := "event: " + strings.Repeat("t", 100<<10) + "\n"
	longComment := ": " + strings.Repeat("c", 100<<10) + "\n"
	cases := []struct {
		name     string
		in       string
		err      error // appended read error
		maxEvent int
		refuseAt int
		reserved int
		events   int
		wantErr  error
	}{
		{name: "one large", in: big + "\n", reserved: 1, events: 1},
		{name: "large, small, large", in: big + "\ndata: s\n\n" + big + big + "\n", reserved: 2, events: 3},
		{name: "large id", in: longID + "data: x\n\n", reserved: 1, events: 1},
		{name: "large type", in: longType + "data: x\n\n", reserved: 1, events: 1},
		{name: "large comment", in: longComment + "data: x\n\n", reserved: 1, events: 1},
		{name: "large unterminated at EOF", in: "data: a\n\n" + big, reserved: 1, events: 1},
		{name: "large then read error", in: "data: a\n\n" + big, err: boom, reserved: 1, events: 1, wantErr: boom},
		{name: "over the limit", in: big + big + "\n", maxEvent: 300 << 10, reserved: 1, events: 0, wantErr: ErrEventTooLarge},
		{name: "refused", in: "data: a\n\n" + big + "\n", refuseAt: 1, reserved: 0, events: 1, wantErr: errBudget},
		{name: "refused then allowed after Reset", in: big + "\n", refuseAt: 1, reserved: 0, wantErr: errBudget},
	}
	for _, c := range cases {
		for _, chunk := range [][]byte{nil, {255, 100}, {3}} {
			var r io.Reader = &chunkReader{s: c.in, sizes: chunk}
			if chunk == nil {
				r = strings.NewReader(c.in)
			}
			if c.err != nil {
				r = io.MultiReader(r, iotest.ErrReader(c.err))
			}
			d := NewDecoder(nil)
			d.Start(r)
			d.MaxEvent = c.maxEvent
			h := &hookCounter{t: t, refuseAt: c.refuseAt}
			h.attach(d)
			events := 0
			var err error
			for {
				if _, err = d.Next(); err != nil {
					break
				}
				events++
			}
			if c.wantErr == nil && err != io.EOF || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Fatalf("%s (chunks %v): err %v, want %v", c.name, chunk, err, c.wantErr)
			}
			if events != c.events {
				t.Fatalf("%s (chunks %v): %d events, want %d", c.name, chunk, events, c.events)
			}
			h.check(d, c.reserved, c.reserved)
			if _, err2 := d.Next(); err2 != err {
				t.Fatalf("%s: error not sticky: %v then %v", c.name, err, err2)
			}
			h.check(d, c.reserved, c.reserved)
			// The decoder is reusable: Start, then a large event again.
			d.Start(strings.NewReader(big + "\n"))
			h.refuseAt = 0
			if e, err := d.Next(); err != nil || len(e.Data) != len(big)-7 {
				t.Fatalf("%s: after Start: %v %d", c.name, err, len(e.Data))
			}
			h.check(d, c.reserved+1, c.reserved) // held while the event is
			if _, err := d.Next(); err != io.EOF {
				t.Fatalf("%s: after the large event: %v", c.name, err)
			}
			h.check(d, c.reserved+1, c.reserved+1)
		}
	}

	// Reset in the middle of an episode: after the first large event the
	// read buffer already holds over 64 KiB of the next one, so the episode
	// goes on; Reset ends it. (Long comment lines: they, not data lines,
	// grow the read buffer.)
	in := ": " + strings.Repeat("a", 150<<10) + "\ndata: " + strings.Repeat("a", 150<<10) + "\n\n: " + strings.Repeat("b", 200<<10) + "\ndata: b\n\n"
	d := NewDecoder(strings.NewReader(in))
	h := &hookCounter{t: t}
	h.attach(d)
	if e, err := d.Next(); err != nil || len(e.Data) != 150<<10 {
		t.Fatalf("first event: %v %d", err, len(e.Data))
	}
	if !d.large || d.end-d.st <= SmallBuffer {
		t.Fatalf("test premise: large %v, %d bytes buffered", d.large, d.end-d.st)
	}
	h.check(d, 1, 0)
	d.Reset(strings.NewReader(""))
	h.check(d, 1, 1)
	d.Reset(strings.NewReader(""))
	h.check(d, 1, 1)
}

// A data line longer than the read buffer goes to the data buffer as it
// is read: the read buffer stays small (it grew to twice the line, and
// the line was copied again into the data buffer: 60 MiB answers held
// 157 MB), the data is the line's value exactly — with or without the
// space after the colon, joined with the event's other data lines, with
// LF, CRLF or CR line ends, in reads of every size — and one Reserve and
// one Release bracket it. Over the limit it fails as before; cut by the
// end of the stream its event is discarded.
func TestSSEDecoderLongDataLineReadInPieces(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("v", 300<<10) + "w"
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		for _, sizes := range [][]byte{nil, {255, 7, 12}, {200}} {
			for _, sep := range []string{"data: ", "data:"} {
				in := "id: 7" + eol + "data: first" + eol + sep + long + eol + "data: last" + eol + eol + "data: after" + eol + eol
				var r io.Reader = strings.NewReader(in)
				if sizes != nil {
					r = &chunkReader{s: in, sizes: sizes}
				}
				mr := &maxReadReader{r: r}
				d := NewDecoder(mr)
				h := &hookCounter{t: t}
				h.attach(d)
				e, err := d.Next()
				maxBuf := mr.max // the most the read buffer offered a read
				if err != nil || string(e.Data) != "first\n"+long+"\nlast" || string(e.ID) != "7" {
					t.Fatalf("eol %q sizes %v sep %q: %v, %d bytes of data, id %q", eol, sizes, sep, err, len(e.Data), e.ID)
				}
				if maxBuf > SmallBuffer {
					t.Fatalf("eol %q sizes %v: the read buffer grew to %d", eol, sizes, maxBuf)
				}
				h.check(d, 1, 0) // reserved while the event is held
				if e, err := d.Next(); err != nil || string(e.Data) != "after" {
					t.Fatalf("eol %q sizes %v: event after: %v %q", eol, sizes, err, e.Data)
				}
				if _, err := d.Next(); err != io.EOF {
					t.Fatalf("end: %v", err)
				}
				h.check(d, 1, 1)
			}
		}
	}
	// Over the limit: the error naming it, buffers small again.
	d := NewDecoder(strings.NewReader("data: " + strings.Repeat("x", 2<<20) + "\n\n"))
	d.MaxEvent = 1 << 20
	h := &hookCounter{t: t}
	h.attach(d)
	if _, err := d.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("a 2 MiB data line over a 1 MiB limit: %v", err)
	}
	h.check(d, 1, 1)
	// Cut by the end of the stream: discarded, not delivered.
	d = NewDecoder(strings.NewReader("data: ok\n\ndata: " + long))
	if e, err := d.Next(); err != nil || string(e.Data) != "ok" {
		t.Fatalf("first: %v %q", err, e.Data)
	}
	if e, err := d.Next(); err != io.EOF || !d.Pending() {
		t.Fatalf("an unterminated long data line: %v, %d bytes, pending %v; want io.EOF and the event discarded", err, len(e.Data), d.Pending())
	}
}

// maxReadReader records the largest buffer a Read was given.
type maxReadReader struct {
	r   io.Reader
	max int
}

func (m *maxReadReader) Read(p []byte) (int, error) {
	m.max = max(m.max, len(p))
	return m.r.Read(p)
}
