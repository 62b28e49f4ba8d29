package netutil

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDeadlineAndTimeout(t *testing.T) {
	sentinel := Deadline("request timeout: no answer in time (--timeout)")
	fired := Timeout(sentinel, "request timeout: no answer within 2s (--timeout)")
	if !errors.Is(sentinel, context.DeadlineExceeded) || !errors.Is(fired, context.DeadlineExceeded) || !errors.Is(fired, sentinel) {
		t.Fatalf("errors.Is: sentinel %v, fired %v", errors.Is(sentinel, context.DeadlineExceeded), errors.Is(fired, sentinel))
	}
	var ne net.Error
	if !errors.As(fired, &ne) || !ne.Timeout() {
		t.Fatalf("the firing must be a net.Error timeout: %T", fired)
	}
	if fired.Error() != "request timeout: no answer within 2s (--timeout)" || sentinel.Error() != "request timeout: no answer in time (--timeout)" {
		t.Fatalf("texts %q / %q", fired, sentinel)
	}
	if errors.Is(Deadline("other"), sentinel) {
		t.Fatal("two sentinels must differ")
	}
}

func TestDurOr(t *testing.T) {
	for _, c := range []struct{ d, def, want time.Duration }{
		{0, time.Second, time.Second}, {-1, time.Second, 0}, {3 * time.Millisecond, time.Second, 3 * time.Millisecond},
	} {
		if got := DurOr(c.d, c.def); got != c.want {
			t.Errorf("DurOr(%v, %v) = %v, want %v", c.d, c.def, got, c.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"  \n  upstream overloaded\r\nmore": "upstream overloaded",
		"":                                  "",
		"\x00\x01binary":                    "",
		strings.Repeat("x", 300):            strings.Repeat("x", 200),
		"{\"error\":\"no\"}\n":              `{"error":"no"}`,
	} {
		if got := FirstLine([]byte(in)); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

func TestDrainReadsAtMost64KiBAndCloses(t *testing.T) {
	body := &closeCounter{Reader: strings.NewReader(strings.Repeat("a", 100<<10))}
	if n := Drain(&http.Response{Body: body}); n != 64<<10 || body.closed != 1 {
		t.Fatalf("drained %d bytes, closed %d times; want 65536 and 1", n, body.closed)
	}
}

func TestSleepCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v, want context.Canceled at once", err)
	}
	if err := SleepCtx(context.Background(), 0); err != nil {
		t.Fatalf("d = 0: %v", err)
	}
	if err := SleepCtx(context.Background(), time.Microsecond); err != nil {
		t.Fatalf("d = 1µs: %v", err)
	}
}
