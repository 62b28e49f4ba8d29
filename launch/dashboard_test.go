package launch

import (
	"bytes"
	"strings"
	"testing"
)

// --dashboard prints where the page is; an address beyond loopback gets
// a warning in serve's words, ":PORT" stays on loopback without one.
func TestDashboardFlagWarnsBeyondLoopback(t *testing.T) {
	for _, c := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {":0", false}, {"0.0.0.0:0", true}} {
		var stderr bytes.Buffer
		lo, err := startLive(&LiveSpec{Dashboard: c.addr}, &stderr)
		if err != nil {
			t.Fatalf("--dashboard %s: %v", c.addr, err)
		}
		if len(lo.sinks()) != 1 {
			t.Errorf("--dashboard %s: %d sinks, want the dashboard", c.addr, len(lo.sinks()))
		}
		lo.close(t.Context(), &stderr)
		out := stderr.String()
		warned := strings.Contains(out, "mcpbench: WARNING: live.ServeDashboard's addr listening on ") && strings.Contains(out, "not a loopback address")
		if warned != c.warn || !strings.Contains(out, "mcpbench: live dashboard at http://") {
			t.Errorf("--dashboard %s: stderr %q (want a warning: %v)", c.addr, out, c.warn)
		}
		if !c.warn && !strings.Contains(out, "http://127.0.0.1:") {
			t.Errorf("--dashboard %s: not on loopback: %q", c.addr, out)
		}
	}
}
