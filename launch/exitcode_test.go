package launch

import (
	"errors"
	"fmt"
	"testing"
)

// An error carries its exit code through wrapping; the outermost code
// wins; an error without one is a usage error; nil is success.
func TestCodeOf(t *testing.T) {
	base := errors.New("x")
	for _, c := range []struct {
		err  error
		want ExitCode
	}{
		{nil, ExitOK},
		{base, ExitUsage},
		{WithExitCode(ExitFailed, base), ExitFailed},
		{fmt.Errorf("wrapped: %w", WithExitCode(ExitThresholds, base)), ExitThresholds},
		{WithExitCode(ExitResultsLost, WithExitCode(ExitFailed, base)), ExitResultsLost},
		{Usagef("bad %d", 1), ExitUsage},
		{WithExitCode(ExitInterrupted, nil), ExitInterrupted},
	} {
		if got := CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if !errors.Is(WithExitCode(ExitFailed, base), base) {
		t.Error("WithExitCode hides its error from errors.Is")
	}
	for _, n := range []int{130, 129, 143} {
		if !Interrupted(n) {
			t.Errorf("Interrupted(%d) = false", n)
		}
	}
	if Interrupted(int(ExitFailed)) {
		t.Error("Interrupted(1)")
	}
}
