package driver_test

import (
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// Issue 34 item 7: a server that acknowledges the cancel and keeps its
// tool running (server-everything's trigger-long-running-operation: the
// 202 at +0.315 s, progress 1–5 from +0.41 s, no response) read
// "after-cancel 0 … raced 46": only a success result counted. Progress
// the server wrote after it acknowledged the cancel now counts, told from
// the stream: read after the reader had read everything that had reached
// it once the 202 was in (the stream drained), beyond the first progress
// after the acknowledgement (the step under way). These run on loopback
// TCP (the drain is read from the socket).

// TestCancelRunOnCountedExactly: the fake sends, per cancelled call, the
// step under way at once and, after the client drained, 3 more progress
// notifications and ends its stream without a response: exactly those 3
// per call are after-cancel.
func TestCancelRunOnCountedExactly(t *testing.T) {
	resume := make(chan struct{}, 1)
	driver.SetCancelDrainedHook(func() {
		select {
		case resume <- struct{}{}:
		default:
		}
	})
	defer driver.SetCancelDrainedHook(nil)
	// Read on until the stream ends (the fake ends it after its progress):
	// however slow the generator, every planted message is read.
	driver.SetCancelGrace(time.Minute)
	defer driver.SetCancelGrace(driver.CancelGrace)
	fake := mcptest.New()
	ro := &mcptest.CancelRunOn{Steps: 100, Every: 20 * time.Millisecond, After: 3, Resume: resume}
	ro.Install(fake)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	s, err := driver.NewSession(&driver.Config{URL: srv.URL + "/mcp", StreamIdleTimeout: 10 * time.Second}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ir driver.Result
	if err := s.Initialize(t.Context(), &ir); err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"long-running"}`), true)
	op.Cancel = &driver.Cancel{After: 50 * time.Millisecond, P: 1}
	var tally cancelTally
	for range 5 {
		var res driver.Result
		s.Do(t.Context(), op, &res)
		tally.add(&res)
	}
	if tally.errs != nil {
		t.Fatalf("errors: %v", tally.errs)
	}
	if tally.cancelled != 5 || ro.Cancels() != 5 || ro.Planted() != 15 || tally.after != 15 {
		t.Fatalf("cancelled %d (server: %d cancels), after-cancel %d, raced %d: want 5 cancelled and exactly the %d progress planted after the drain",
			tally.cancelled, ro.Cancels(), tally.after, tally.raced, ro.Planted())
	}
}

// The reference server's long tool (progress every 20 ms for 1 s, the
// go-sdk stopping it on the cancel) is clean with 16 sessions cancelling
// at once on loopback: the step under way at the cancel is allowed, and
// nothing follows it.
func TestCancelRunOnRefServerClean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server")
	}
	srv, err := refserver.Start(t.Context(), "", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"long","arguments":{"ms":1000,"interval_ms":20}}`), true)
	op.Cancel = &driver.Cancel{After: 100 * time.Millisecond, P: 1}
	var tally cancelTally
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			s, err := driver.NewSession(&driver.Config{URL: srv.URL(), Seed: int64(i)}, i+1)
			if err != nil {
				t.Error(err)
				return
			}
			var ir driver.Result
			if err := s.Initialize(t.Context(), &ir); err != nil {
				t.Error(err)
				return
			}
			defer s.Close(t.Context())
			for range 3 {
				var res driver.Result
				s.Do(t.Context(), op, &res)
				tally.add(&res)
			}
		})
	}
	wg.Wait()
	if tally.errs != nil {
		t.Fatalf("errors: %v", tally.errs)
	}
	if tally.cancelled == 0 || tally.after != 0 {
		t.Fatalf("cancelled %d of %d, after-cancel %d, raced %d: want cancels, none after-cancel", tally.cancelled, tally.n, tally.after, tally.raced)
	}
}
