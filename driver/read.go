package driver

import (
	"context"
	"io"
	"strings"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/units"
)

// Reading answers: the media type of a response, bodies read within
// max_message_bytes, large messages held against the memory budget.

// mt is a response's media type, as mediaType classifies it.
type mt uint8

const (
	mtOther mt = iota
	mtJSON
	mtSSE
)

// mediaType classifies a Content-Type without allocating.
func mediaType(ct string) mt {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	switch {
	case strings.EqualFold(ct, "application/json"):
		return mtJSON
	case strings.EqualFold(ct, "text/event-stream"):
		return mtSSE
	}
	return mtOther
}

// readAll reads r into buf up to limit bytes (ErrResponseTooLarge beyond).
func readAll(r io.Reader, buf []byte, limit int64) ([]byte, int64, error) {
	var n int64
	for {
		if len(buf) == cap(buf) {
			grow := min(max(cap(buf), 512), int(limit-int64(len(buf))+1))
			buf = append(buf, make([]byte, max(grow, 1))...)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		n += int64(m)
		if n > limit {
			return buf, n, ErrResponseTooLarge
		}
		if err == io.EOF {
			return buf, n, nil
		}
		if err != nil {
			return buf, n, err
		}
	}
}

// doneMessage gives back what reading a message held, once it is handled:
// a sized answer's buffer (its capacity is its reservation) to the budget
// for the next large answer, any other reservation released; then
// keepJSONBuf.
func (s *Lane) doneMessage(b []byte, held int64) {
	if held > jsonSmall && int64(cap(b)) == held {
		s.budget.giveSized(b, held)
	} else {
		s.budget.release(held)
	}
	s.keepJSONBuf(b)
}

// keepJSONBuf keeps b as the session's JSON buffer when it is small, else
// drops it (a large answer's buffer is not held for the rest of the run).
func (s *Lane) keepJSONBuf(b []byte) {
	if cap(b) <= jsonSmall {
		s.jbuf = b[:0]
	} else {
		s.jbuf = nil
	}
}

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
func (s *Lane) readMessage(ctx context.Context, r io.Reader, size, limit int64) (msg []byte, held int64, err error) {
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
			return buf, 0, tooLarge(ErrResponseTooLarge.Error() + " " + units.Size(limit).String())
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
			return buf, held, tooLarge(ErrResponseTooLarge.Error() + " " + units.Size(limit).String())
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
// that size, reserved with it (Budget.takeSized: a buffer of an earlier
// answer of about that size when the budget kept one); buf holds what was
// read so far. The body reader ends at size, so nothing beyond is read.
func (s *Lane) readSized(ctx context.Context, r io.Reader, buf []byte, size int64) (msg []byte, held int64, err error) {
	out, held, err := s.budget.takeSized(ctx, max(size, int64(len(buf))))
	if err != nil {
		return buf, 0, err
	}
	n := copy(out, buf)
	m, err := io.ReadFull(r, out[n:])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil // a short body: parsing says what is missing
	}
	return out[:n+m], held, err
}

// tooLarge is ErrResponseTooLarge with its text msg (which names the
// limit) and the setting that raises it.
func tooLarge(msg string) error {
	return setting.Errorf(ErrResponseTooLarge, msg, "; raise it with %s", setting.MaxMessageBytes)
}
