package argtmpl

import (
	"math/bits"
	"math/rand/v2"
	"unicode/utf8"
)

// rngState is the random stream of one request's arguments: a PCG seeded
// from the op's seed and the request's VU and iteration, so the stream
// needs no state between requests and no lock, and a run with the same
// seed draws the same values for the same VU and iteration.
type rngState struct{ p rand.PCG }

func (r *rngState) seed(a, b uint64) { r.p.Seed(a, b) }

// mix64 is SplitMix64's finalizer: spreads nearby inputs over 64 bits.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// uintN returns a uniform draw in [0, n) (n > 0), without modulo bias
// (Lemire's multiply-and-reject).
func uintN(r *rngState, n uint64) uint64 {
	hi, lo := bits.Mul64(r.p.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.p.Uint64(), n)
		}
	}
	return hi
}

// between returns a uniform draw in [lo, hi] (lo ≤ hi).
func (r *rngState) between(lo, hi int64) int64 {
	span := uint64(hi-lo) + 1
	if span == 0 { // the whole int64 range
		return int64(r.p.Uint64())
	}
	return lo + int64(uintN(r, span))
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// appendString appends n characters drawn uniformly from [A-Za-z0-9].
func (r *rngState) appendString(dst []byte, n int) []byte {
	var x uint64
	left := 0 // 6-bit chunks left in x
	for n > 0 {
		if left == 0 {
			x, left = r.p.Uint64(), 10
		}
		c := x & 63
		x >>= 6
		left--
		if c < uint64(len(alnum)) { // 62 of 64: reject 2 to stay uniform
			dst = append(dst, alnum[c])
			n--
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendUUID appends a version 4 (random) UUID, RFC 9562 §5.4.
func (r *rngState) appendUUID(dst []byte) []byte {
	var b [16]byte
	a, c := r.p.Uint64(), r.p.Uint64()
	for i := range 8 {
		b[i], b[8+i] = byte(a>>(8*i)), byte(c>>(8*i))
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10
	for i, v := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[v>>4], hexDigits[v&15])
	}
	return dst
}

// appendEscaped appends s JSON-escaped, without quotes (RFC 8259 §7):
// quote, backslash and control characters escaped, invalid UTF-8 replaced
// by U+FFFD (as encoding/json does), U+2028 and U+2029 escaped.
func appendEscaped(dst []byte, s []byte) []byte {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\':
				dst = append(dst, '\\', b)
			case b >= 0x20:
				dst = append(dst, b)
			case b == '\n':
				dst = append(dst, '\\', 'n')
			case b == '\r':
				dst = append(dst, '\\', 'r')
			case b == '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&15])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&15])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// appendEscapedString appends s as a JSON string, quotes included.
func appendEscapedString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, []byte(s))
	return append(dst, '"')
}
