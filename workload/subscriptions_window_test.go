package workload

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// The subscription tallies and the notification counts are counts of the
// same notifications: with a warm-up, the GET streams count every
// notifications/resources/updated of the sessions' whole life, so the
// subscription summary must account for those outside the measured
// window too (Outside) instead of losing them. Against the official Go
// SDK server every change in the window is notified once, none is
// unmatched.
func TestSubscriptionCountsAgreeWithNotifications(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	p, err := profile.LoadProfile("subscriptions")
	if err != nil {
		t.Fatal(err)
	}
	p.Duration, p.Warmup, p.Protocol = profile.Duration(1500*time.Millisecond), profile.Duration(500*time.Millisecond), driver.Protocol20251125
	sum, _ := runRef(t, refserver.Options{}, p)
	s := sum.Subscriptions
	if f := faults(sum); len(f) != 0 || s == nil {
		t.Fatalf("faults %v, subscriptions %+v", f, s)
	}
	var streams int64
	if n := sum.All.Notifications; n != nil {
		streams += n.ResourcesUpdated
	}
	if g := sum.GETStreams; g != nil && g.Notifications != nil {
		streams += g.Notifications.ResourcesUpdated
	}
	if s.Outside == 0 {
		t.Errorf("no notification counted outside the window after a 500 ms warm-up: %+v", s)
	}
	if got := s.Notified + s.Unmatched + s.Outside; got != streams {
		t.Errorf("notified %d + unmatched %d + outside the window %d = %d, but the streams counted %d notifications/resources/updated", s.Notified, s.Unmatched, s.Outside, got, streams)
	}
	if s.Changes == 0 || s.Notified != s.Changes || s.Unnotified != 0 || s.Unmatched != 0 {
		t.Errorf("subscriptions %+v: want every change in the window notified once", s)
	}
}

// Notifications outside the measured window are counted apart, and only
// notifications: a change or an unnotified change outside it is not one.
func TestRecordUpdateOutside(t *testing.T) {
	rec := metrics.NewRecorder([]string{"x"}, 1)
	now := time.Now()
	rec.RecordUpdateOutside(driver.ResourceUpdate{Kind: driver.UpdateChange, Changed: now})
	rec.RecordUpdateOutside(driver.ResourceUpdate{Kind: driver.UpdateUnnotified, Changed: now})
	if s := rec.Subscriptions(); s != nil {
		t.Fatalf("changes outside the window counted: %+v", s)
	}
	rec.RecordUpdateOutside(driver.ResourceUpdate{Kind: driver.UpdateNotified, Changed: now, At: now})
	rec.RecordUpdateOutside(driver.ResourceUpdate{Kind: driver.UpdateUnmatched, At: now})
	rec.RecordUpdate(driver.ResourceUpdate{Kind: driver.UpdateUnmatched, At: now})
	if s := rec.Subscriptions(); s == nil || s.Outside != 2 || s.Unmatched != 1 || s.Notified != 0 {
		t.Fatalf("subscriptions %+v", s)
	}
}
