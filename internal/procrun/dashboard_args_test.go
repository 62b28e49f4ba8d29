package procrun

import "testing"

// The children of --processes never get --dashboard: N processes on one
// address would fail; the parent serves the merged run.
func TestProcessDropDashboard(t *testing.T) {
	for _, n := range []string{"dashboard", "dashboard-linger"} {
		if !ProcessDrop[n] {
			t.Errorf("ProcessDrop lacks %s: every child would serve its own dashboard", n)
		}
	}
}
