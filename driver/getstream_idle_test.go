package driver_test

import (
	"testing"

	"github.com/mcpbench/mcpbench/refserver"
)

// An idle GET stream (plain HTTP/1.1) waits with no goroutine (the epoll
// watch) and no read buffer (BenchmarkIdleSessionMemory measures what that saves);
// notifications wake it, each arrives once and in order (the ledger of
// numbered notifications), and it waits again. Three rounds of 5 against
// the reference server: 15 events, no break, a clean ledger.
func TestGETStreamIdleWaitsAndWakes(t *testing.T) {
	t.Parallel()
	s := refSession(t, startRef(t, refserver.ModeStateful))
	if err := s.OpenStream(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the GET stream waiting idle", s.GETIdle)
	for round := int64(1); round <= 3; round++ {
		do(t, s, op(t, "tools/call", `{"name":"notify","arguments":{"count":5,"interval_ms":1}}`, false))
		waitFor(t, "5 more notifications", func() bool { return s.StreamStats().Events >= 5*round })
		waitFor(t, "the GET stream waiting idle again", s.GETIdle)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := s.StreamStats()
	if st.Events != 15 || st.Breaks != 0 || !st.Ledger.Checked || st.Ledger.Faulty() {
		t.Fatalf("events %d breaks %d ledger checked %v counts %v: want 15, 0, a clean checked ledger", st.Events, st.Breaks, st.Ledger.Checked, st.Ledger.Counts)
	}
}
