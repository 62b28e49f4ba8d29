package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// hlogEncoder writes a Hist as one interval line of an HdrHistogram log,
// byte for byte as hdr.HistogramLogWriter.OutputIntervalHistogram writes
// the equivalent dense histogram (TestHlogEncoderMatchesLibrary), from the
// sparse buckets and with one zlib compressor and its buffers reused: the
// library's writer allocates a compressor of about 1 MB per histogram, so
// each interval of a 1,000-op run cost ~3 GB of garbage and a second of
// CPU. Not safe for concurrent use.
type hlogEncoder struct {
	inner, out, line []byte
	zb               bytes.Buffer
	zw               *zlib.Writer
}

// The V2 encoding's cookies and header (hdr's constants, less the
// unexported ones).
const (
	hlogEncodingCookie   = hdr.V2EncodingCookieBase | 0x10
	hlogCompressedCookie = hdr.V2CompressedEncodingCookieBase | 0x10
	hlogHeaderSize       = hdr.ENCODING_HEADER_SIZE
)

// write writes h's line to w: tag, [startMs, endMs] against the log's
// base time baseMs (ms since the epoch).
func (e *hlogEncoder) write(w io.Writer, baseMs int64, tag string, startMs, endMs int64, h *Hist) error {
	if strings.ContainsAny(tag, ", \r\n") {
		return fmt.Errorf("tag string cannot contain commas, spaces, or line breaks. used tag: %s", tag)
	}
	e.inner = append(e.inner[:0], make([]byte, hlogHeaderSize)...)
	e.inner = appendCounts(e.inner, h)
	in := e.inner
	binary.BigEndian.PutUint32(in[0:], uint32(hlogEncodingCookie))
	binary.BigEndian.PutUint32(in[4:], uint32(len(in)-hlogHeaderSize))
	binary.BigEndian.PutUint32(in[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(in[12:], uint32(histSigFigs))
	binary.BigEndian.PutUint64(in[16:], uint64(HistMin))
	binary.BigEndian.PutUint64(in[24:], uint64(HistMax))
	binary.BigEndian.PutUint64(in[32:], math.Float64bits(1)) // integer to double conversion ratio
	e.zb.Reset()
	if e.zw == nil {
		zw, err := zlib.NewWriterLevel(&e.zb, zlib.BestCompression)
		if err != nil {
			return err
		}
		e.zw = zw
	} else {
		e.zw.Reset(&e.zb)
	}
	if _, err := e.zw.Write(in); err != nil {
		return err
	}
	if err := e.zw.Close(); err != nil {
		return err
	}
	e.out = binary.BigEndian.AppendUint32(e.out[:0], uint32(hlogCompressedCookie))
	e.out = binary.BigEndian.AppendUint32(e.out, uint32(e.zb.Len()))
	e.out = append(e.out, e.zb.Bytes()...)
	start := (float64(startMs) - float64(baseMs)) / 1000.0
	end := (float64(endMs) - float64(baseMs)) / 1000.0
	l := append(e.line[:0], "Tag="...)
	l = append(l, tag...)
	l = append(l, ',')
	l = strconv.AppendFloat(l, start, 'f', 6, 64)
	l = append(l, ',')
	l = strconv.AppendFloat(l, end-start, 'f', 6, 64)
	l = append(l, ',')
	l = strconv.AppendFloat(l, float64(h.Max())/hdr.MsToNsRatio, 'f', 6, 64)
	l = append(l, ',')
	l = base64.StdEncoding.AppendEncode(l, e.out)
	l = append(l, '\n')
	e.line = l
	_, err := w.Write(l)
	return err
}

// appendCounts appends h's counts as the V2 payload: the counts array up
// to the highest populated bucket, each run of more than one empty bucket
// as its negated length, in ZigZag LEB128.
func appendCounts(b []byte, h *Hist) []byte {
	next := int64(0) // the flat index the payload has reached
	if h.TotalCount() > 0 {
		for v, n := range h.p.ForEachBucket {
			idx := flatIndex(v)
			b = appendZeros(b, idx-next)
			b = appendZigZag(b, n)
			next = idx + 1
		}
	}
	if next == 0 { // empty: the counts array up to index 0
		b = appendZeros(b, 1)
	}
	return b
}

func appendZeros(b []byte, n int64) []byte {
	switch {
	case n == 1:
		return appendZigZag(b, 0)
	case n > 1:
		return appendZigZag(b, -n)
	}
	return b
}

// flatIndex is the counts index of value v in NewHistogram's geometry.
func flatIndex(v int64) int64 {
	const subBucketMask, halfCount, halfMagnitude = 2047, 1024, 10
	b := bits.Len64(uint64(v|subBucketMask)) - (halfMagnitude + 1)
	sub := v >> b
	return int64(b+1)<<halfMagnitude + sub - halfCount
}

// appendZigZag appends v as hdr's ZigZag LEB128-64b9B: seven bits a byte,
// the ninth byte carrying eight.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}
