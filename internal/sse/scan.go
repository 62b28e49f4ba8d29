package sse

import (
	"bytes"
	"fmt"
	"io"

	"github.com/mcpbench/mcpbench/internal/units"
)

// readLine returns the next line without its terminator.
func (d *Decoder) readLine() (line []byte, err error) {
	for {
		if d.st < d.end {
			if !d.bomChecked {
				if d.end-d.st < 3 && !d.eof && bytes.HasPrefix([]byte("\xEF\xBB\xBF"), d.buf[d.st:d.end]) {
					if err := d.fill(); err != nil {
						return nil, err
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
			if i := d.indexEOL(); i >= 0 {
				line = d.buf[d.st:i]
				d.st = i + 1
				if d.buf[i] == '\r' {
					if d.st < d.end {
						if d.buf[d.st] == '\n' {
							d.st++
						}
					} else {
						d.skipLF = true
					}
				}
				if d.evBytes += len(line) + 1; d.Limit() < d.evBytes {
					return nil, d.fail(&eventTooLargeError{d.Limit()})
				}
				if d.spill { // the end of a spilled data line
					d.spill = false
					if err := d.spillData(line); err != nil {
						return nil, d.fail(err)
					}
					d.data = append(d.data, '\n')
					continue
				}
				return line, nil
			}
			// The window is one partial line: fail as soon as it cannot fit.
			if d.evBytes+(d.end-d.st)+1 > d.Limit() {
				return nil, d.fail(&eventTooLargeError{d.Limit()})
			}
			// A data line that fills the whole small read buffer: its value
			// so far goes to the data buffer (the copy it needs anyway), so
			// the read buffer stays small however long the line.
			if d.st == 0 && d.end == len(d.buf) && len(d.buf) >= d.small() && (d.spill || bytes.HasPrefix(d.buf[:d.end], dataField)) {
				w := d.buf[:d.end]
				if !d.spill {
					w = w[len(dataField):]
					if len(w) > 0 && w[0] == ' ' {
						w = w[1:]
					}
					d.fields++
					d.spill = true
				}
				d.evBytes += d.end
				if err := d.spillData(w); err != nil {
					return nil, d.fail(err)
				}
				d.st = d.end
			}
		}
		if d.eof {
			// Unterminated final line: per WHATWG the pending event is
			// discarded, so the line does not matter.
			d.spill = false
			if d.fields > 0 || d.st < d.end {
				d.partial = true
			}
			d.st = d.end
			d.fields = 0
			if d.err != nil {
				return nil, d.err
			}
			return nil, io.EOF
		}
		if err := d.fill(); err != nil {
			return nil, err
		}
	}
}

// spillJump is the data buffer beyond which a long data line's buffer
// grows at once to the event limit (spillData).
const spillJump = 4 << 20

// dataField starts a data line.
var dataField = []byte("data:")

// spillData appends v, part of a long data line's value, to the data
// buffer, growing it twofold up to spillJump and then at once to the
// event limit (a large episode started before it grows beyond the small
// size; the episode's reservation covers the limit twice): a line of
// many MiB costs one buffer of the limit and a few MiB of dropped ones,
// where the read buffer doubled to hold it (twice its length dropped,
// 1.5 times held at the last step) and the line was then copied into the
// data buffer.
func (d *Decoder) spillData(v []byte) error {
	if need := len(d.data) + len(v) + 1; need > cap(d.data) {
		n := max(len(v)+1, cap(d.data))
		if cap(d.data) >= spillJump {
			n = max(len(v)+1, d.Limit()+1-len(d.data))
		}
		if err := d.room(&d.data, n); err != nil {
			return err
		}
	}
	d.data = append(d.data, v...)
	d.work += int64(len(v))
	return nil
}

// indexEOL returns the index in buf of the first CR or LF in buf[st:end],
// or -1. Thanks to the memo each byte is searched at most once for LF and
// once for CR, however the stream is split into reads.
func (d *Decoder) indexEOL() int {
	st := d.st
	lf := d.lf
	if lf < st && d.lfScan <= st && d.crScan <= st {
		// Common case: nothing of the window was searched before.
		win := d.buf[st:d.end]
		if i := bytes.IndexByte(win, '\n'); i >= 0 {
			if j := bytes.IndexByte(win[:i], '\r'); j >= 0 {
				d.work += int64(i + j + 2)
				d.lf, d.crScan = st+i, st+j
				return st + j
			}
			d.work += int64(2*i + 1)
			return st + i
		}
		d.work += int64(len(win))
		d.lfScan = d.end
		lf = d.end // no LF: search the whole window for CR
	} else if lf < st {
		from := max(d.lfScan, st)
		if j := bytes.IndexByte(d.buf[from:d.end], '\n'); j >= 0 {
			lf = from + j
			d.work += int64(j + 1)
		} else {
			d.lfScan = d.end
			d.work += int64(d.end - from)
			lf = d.end
		}
	}
	from := max(d.crScan, st)
	if j := bytes.IndexByte(d.buf[from:lf], '\r'); j >= 0 {
		d.work += int64(j + 1)
		d.crScan = from + j
		if lf < d.end {
			d.lf = lf // keep the LF found beyond this line
		}
		return from + j
	}
	d.work += int64(lf - from)
	if lf < d.end {
		return lf // consumed now: no memo needed
	}
	d.crScan = d.end
	return -1
}

// shift moves the unconsumed window to the start of dst (buf itself, or a
// new buffer) and keeps the search memo pointing at the same bytes.
func (d *Decoder) shift(dst []byte) {
	n := copy(dst, d.buf[d.st:d.end])
	d.work += int64(n)
	d.lf -= d.st
	d.lfScan -= d.st
	d.crScan -= d.st
	d.buf = dst
	d.st, d.end = 0, n
}

// fill reads more bytes, compacting or growing the buffer. It records EOF and
// read errors in d.eof/d.err (the bytes read with them are processed before
// readLine reports them); it returns an error only when the buffer cannot
// grow (the line is over the limit, or Reserve refused).
func (d *Decoder) fill() error {
	if d.buf == nil {
		d.buf = decBufPool.Get().(*[initialBuffer]byte)[:] // parked (Reset(nil)) or new
	}
	if d.st > 0 {
		d.shift(d.buf)
	}
	if d.end == len(d.buf) {
		sm := d.small()
		n := 2 * len(d.buf)
		if len(d.buf) < sm && n > sm {
			n = sm
		}
		n = min(n, d.Limit())
		if n <= len(d.buf) {
			return d.fail(&eventTooLargeError{d.Limit()})
		}
		if n > sm {
			if err := d.enterLarge(); err != nil {
				return d.fail(err)
			}
			if len(d.buf) <= sm {
				d.smallBuf = d.buf
			}
		}
		d.shift(make([]byte, n))
	}
	if d.ReturnIdle && d.end == 0 && !d.large && !d.idled {
		// Nothing unconsumed: the caller waits without the read buffer.
		if len(d.buf) == initialBuffer {
			decBufPool.Put((*[initialBuffer]byte)(d.buf))
		}
		d.buf = nil
		d.idled = true
		return ErrIdle
	}
	d.idled = false
	if d.buf == nil {
		d.buf = decBufPool.Get().(*[initialBuffer]byte)[:]
	}
	for tries := 0; tries < 100; tries++ {
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		if err != nil {
			d.eof = true
			if err != io.EOF {
				d.err = err
			}
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	d.eof, d.err = true, io.ErrNoProgress
	return nil
}

// Limit is the largest event the decoder accepts, in bytes: MaxEvent, or
// MaxEventBytes when that is 0.
func (d *Decoder) Limit() int {
	if d.MaxEvent > 0 {
		return d.MaxEvent
	}
	return MaxEventBytes
}

func (d *Decoder) small() int {
	if d.smallSize > 0 {
		return d.smallSize
	}
	return SmallBuffer
}

// fail ends the stream with err: every later Next returns it.
func (d *Decoder) fail(err error) error {
	d.eof, d.err = true, err
	d.spill = false
	d.partial = true
	d.st = d.end
	d.fields = 0
	return err
}

// enterLarge starts a large episode (Reserve) unless one is under way.
func (d *Decoder) enterLarge() error {
	if d.large {
		return nil
	}
	if d.Reserve != nil {
		if err := d.Reserve(); err != nil {
			return fmt.Errorf("SSE event needs more than %s of buffers: %w", units.Size(d.small()).String(), err)
		}
	}
	d.large = true
	return nil
}

// leaveLarge drops the large buffers of an episode: the field buffers at
// once (a dispatched event keeps them; leaveLarge is only called when no
// event is pending), the read buffer when the unconsumed input fits the
// small one. With every buffer small again the episode ends (Release).
func (d *Decoder) leaveLarge() {
	if !d.large {
		return
	}
	sm := d.small()
	if cap(d.data) > sm {
		d.data = d.smallData[:0]
		d.smallData = nil
	}
	if cap(d.typ) > sm {
		d.typ = nil
	}
	if cap(d.pendID) > sm {
		d.pendID = nil
	}
	if len(d.buf) > sm {
		nb := d.smallBuf
		if nb == nil {
			nb = make([]byte, min(initialBuffer, sm))
		}
		if d.end-d.st > len(nb) {
			return // the next large input is already buffered: go on
		}
		d.shift(nb)
		d.smallBuf = nil
	}
	d.large = false
	if d.Release != nil {
		d.Release()
	}
}

// room makes room for n more bytes in *b (a field buffer), starting a large
// episode before it grows beyond the small size.
func (d *Decoder) room(b *[]byte, n int) error {
	need := len(*b) + n
	if need <= cap(*b) {
		return nil
	}
	sm := d.small()
	c := max(2*cap(*b), need, 64)
	if c > sm {
		if need <= sm {
			c = sm
		} else {
			if err := d.enterLarge(); err != nil {
				return err
			}
			// Grow by a quarter (amortised linear, little slack), never
			// beyond what the event limit allows.
			c = min(max(cap(*b)+cap(*b)/4, need), max(need, d.Limit()))
			if b == &d.data && cap(d.data) <= sm {
				d.smallData = d.data[:0]
			}
		}
	}
	nb := make([]byte, len(*b), c)
	d.work += int64(copy(nb, *b))
	*b = nb
	return nil
}
