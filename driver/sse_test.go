package driver

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
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

func decodeAll(r io.Reader) decoded {
	d := NewSSEDecoder(r)
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
func refDecode(s string) decoded {
	s = strings.TrimPrefix(s, "\uFEFF")
	var lines []string
	complete := false
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			complete = s == ""
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	_ = complete // an unterminated last line is simply not in lines
	out := decoded{Retry: -1}
	var data, typ, idBuf, lastID string
	hasData, hasID, fields, retry := false, false, 0, -1
	for _, l := range lines {
		if l == "" {
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
	d := NewSSEDecoder(strings.NewReader("retry: 250\nid: s_3\ndata: x\n\nid: s_4\ndata: y"))
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
	d := NewSSEDecoder(strings.NewReader("data: " + strings.Repeat("x", 5000) + "\n\n"))
	d.MaxEvent = 1024
	if _, err := d.Next(); !errors.Is(err, ErrSSEMalformed) {
		t.Fatalf("oversized event: err = %v, want ErrSSEMalformed", err)
	}
	d = NewSSEDecoder(strings.NewReader(strings.Repeat("\n", 100000) + "data: ok\n\n"))
	d.MaxEvent = 1024
	if e, err := d.Next(); err != nil || string(e.Data) != "ok" {
		t.Fatalf("blank lines must not count toward the event limit: %v %q", err, e.Data)
	}
	boom := errors.New("boom")
	d = NewSSEDecoder(io.MultiReader(strings.NewReader("id: 7\ndata: a\n\ndata: half"), iotest.ErrReader(boom)))
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

// FuzzSSEDecoder checks the decoder against the reference reading of the
// WHATWG rules, with the input split into arbitrary read chunks.
func FuzzSSEDecoder(f *testing.F) {
	for _, s := range []string{
		"id: 1\nevent: message\ndata: {}\n\n",
		"\uFEFFdata: a\r\ndata: b\r\rretry: 10\n\n",
		"event: prime\nid: a_0\ndata:\n\nevent: close\nretry: 1500\n\n",
		": c\n\nid\ndata\n\n",
		"id: x\x00y\ndata: z\n\n",
		"data: a\r",
		"retry: 99999999999999999999\ndata: b\n\n",
	} {
		f.Add(s, []byte{1, 5, 3})
	}
	f.Fuzz(func(t *testing.T, in string, sizes []byte) {
		got := decodeAll(&chunkReader{s: in, sizes: sizes})
		if got.Err != "" {
			t.Skip() // only the size limit errors, and fuzz inputs are small
		}
		want := refDecode(in)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decode(%q) differs from the reference (-want +got):\n%s", in, diff)
		}
	})
}
