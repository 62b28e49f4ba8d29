package sse

import (
	"bytes"
	"io"
	"strconv"
	"testing"
)

// BenchmarkSSEDecoder decodes a stream of progress notifications.
func BenchmarkSSEDecoder(b *testing.B) {
	var stream []byte
	for i := range 100 {
		stream = append(stream, "id: s_"+strconv.Itoa(i)+"\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":"+strconv.Itoa(i)+",\"total\":100}}\n\n"...)
	}
	r := bytes.NewReader(stream)
	d := NewDecoder(r)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(stream)
		d.Start(r)
		for {
			if _, err := d.Next(); err != nil {
				break
			}
		}
	}
}

// oneByteReader returns its input one byte per Read, the worst chunking a
// server (or a slow network) can produce.
type oneByteReader struct {
	b []byte
	i int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[r.i]
	r.i++
	return 1, nil
}

// BenchmarkSSEDecoderOneByteChunks decodes streams delivered one byte per
// Read: the cost per byte must not depend on how long a line is (it did:
// a long line was rescanned after every read). Reports ns/byte.
func BenchmarkSSEDecoderOneByteChunks(b *testing.B) {
	var events []byte
	for i := range 100 {
		events = append(events, "id: s_"+strconv.Itoa(i)+"\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":"+strconv.Itoa(i)+",\"total\":100}}\n\n"...)
	}
	longLine := func(n int) []byte {
		s := append([]byte("data: "), bytes.Repeat([]byte("x"), n)...)
		return append(s, "\n\n"...)
	}
	for _, c := range []struct {
		name   string
		stream []byte
		events int
	}{
		{"events", events, 100},
		{"line-64KiB", longLine(64 << 10), 1},
		{"line-1MiB", longLine(1 << 20), 1},
		{"line-4MiB", longLine(4 << 20), 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := &oneByteReader{b: c.stream}
			d := NewDecoder(r)
			b.SetBytes(int64(len(c.stream)))
			b.ReportAllocs()
			for b.Loop() {
				r.i = 0
				d.Start(r)
				n := 0
				for {
					if _, err := d.Next(); err != nil {
						break
					}
					n++
				}
				if n != c.events {
					b.Fatalf("%d events, want %d", n, c.events)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.stream)), "ns/byte")
		})
	}
}
