package units

import "testing"

// Size.String is the one byte formatter: messages about limits print it,
// and it must read back through ParseSize (the form a flag takes).
func TestSizeStringRoundTrips(t *testing.T) {
	for _, c := range []struct {
		n    Size
		want string
	}{
		{0, "0B"}, {512, "512B"}, {1023, "1023B"}, {1024, "1KiB"}, {64 << 10, "64KiB"},
		{1536, "1536B"}, {16 << 20, "16MiB"}, {3 << 19, "1536KiB"}, {2 << 30, "2GiB"},
	} {
		got := c.n.String()
		if got != c.want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(c.n), got, c.want)
		}
		if back, err := ParseSize(got); err != nil || back != c.n {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", got, int64(back), err, int64(c.n))
		}
	}
}
