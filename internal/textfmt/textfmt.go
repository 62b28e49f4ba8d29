// Package textfmt holds the small formatting helpers every text report
// shares (the run summary, compare, the sweep table, the soak verdicts), so
// numbers read the same everywhere. It owns formatting only: no statistics,
// no judging.
package textfmt

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Printer writes formatted lines and keeps the first write error.
type Printer struct {
	W   io.Writer
	Err error
}

// F writes a formatted string unless an earlier write failed.
func (p *Printer) F(format string, args ...any) {
	if p.Err == nil {
		_, p.Err = fmt.Fprintf(p.W, format, args...)
	}
}

// MS formats milliseconds with 3 significant decimals for small values:
// "0.587", "25.39", "1150.0", "12345".
func MS(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 100:
		return fmt.Sprintf("%.2f", v)
	case v < 10000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// Counts renders a count map sorted by key: "timeout 3, transport 1".
func Counts(m map[string]int64) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// Num renders a number without trailing zeros for integers: "12", "3.250".
func Num(v float64) string {
	if v == float64(int64(v)) && v < 1e12 && v > -1e12 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Signed is Num with a sign: "+3", "-0.250".
func Signed(v float64) string {
	s := Num(v)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

// Statuses renders the HTTP statuses faulty sessions answered:
// "; faulty sessions answered HTTP 200 ×3, HTTP 400 ×1" ("" for none).
func Statuses(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("HTTP %s ×%d", k, m[k]))
	}
	return "; faulty sessions answered " + strings.Join(parts, ", ")
}

// Round3 rounds to 3 decimals (the precision of summary numbers).
func Round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// Value formats a number in the one format its unit has everywhere
// (tables, limits, verdicts): ms as MS, % with two decimals, ops/s and s
// with one, counts (no unit) whole when they are.
func Value(v float64, unit string) string {
	switch unit {
	case "ms":
		return MS(v)
	case "%":
		return strconv.FormatFloat(v, 'f', 2, 64)
	case "ops/s", "s":
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return Num(v)
}

// SignedValue is Value with a sign: "+0.250", "-3.1".
func SignedValue(v float64, unit string) string {
	s := Value(math.Abs(v), unit)
	if v < 0 {
		return "-" + s
	}
	return "+" + s
}
