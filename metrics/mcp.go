package metrics

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// record adds one result's pages, notifications and tail wait.
func recordMCP(m *results.MCPTally, res *driver.Result) {
	m.Pages += int64(res.Pages)
	m.Notes.AddNotifications(res.Notifications)
	if res.TailWait > 0 {
		m.TailWaits++
		m.TailWaitUS += res.TailWait.Microseconds()
	}
}

// recordCancelled records an op cancelled by the client (Op.Cancel) into
// o, with s.mu held, and unlocks it: apart from latency and errors, its
// ledger judged like any other (a faulty one goes to offenders.json).
func (s *Shard) recordCancelled(o *results.OpStats, res *driver.Result) {
	faulty := cancelled(o, res)
	s.mu.Unlock()
	if faulty {
		s.rec.offenders.add(s.rec.names[res.Op], res)
	}
}

// cancelled counts a cancelled op; it reports whether its ledger found a
// fault.
func cancelled(o *results.OpStats, res *driver.Result) bool {
	o.MCP.Cancelled++
	o.MCP.CancelRaced += int64(res.CancelRaced)
	recordMCP(&o.MCP, res)
	o.BytesIn += res.BytesIn
	o.BytesOut += res.BytesOut
	if !res.Ledger.Checked {
		return false
	}
	o.Streams++
	for i, c := range res.Ledger.Counts {
		o.Verdicts[i] += int64(c)
	}
	if res.Ledger.Faulty() {
		o.Faulty++
		return true
	}
	return false
}

// subTally is the recorder's subscription bookkeeping.
type subTally struct {
	mu   sync.Mutex
	sum  results.SubscriptionSummary
	hist *hdr.Histogram
}

// RecordUpdate records one event of a session's subscriptions. Safe for
// concurrent use (the driver calls it from ops and GET streams).
func (r *Recorder) RecordUpdate(u driver.ResourceUpdate) {
	t := &r.subs
	t.mu.Lock()
	defer t.mu.Unlock()
	switch u.Kind {
	case driver.UpdateChange:
		t.sum.Changes++
	case driver.UpdateNotified:
		t.sum.Notified++
		if t.hist == nil {
			t.hist = results.NewHistogram()
		}
		t.hist.RecordValue(us(u.Latency()))
	case driver.UpdateUnmatched:
		t.sum.Unmatched++
	case driver.UpdateUnnotified:
		t.sum.Unnotified++
	}
}

// RecordUpdateOutside records one event of a session's subscriptions
// that belongs outside the measured window: a notification (UpdateNotified
// or UpdateUnmatched) counts in Outside; changes and unnotified changes
// outside the window are not counted. Safe for concurrent use.
func (r *Recorder) RecordUpdateOutside(u driver.ResourceUpdate) {
	if u.Kind != driver.UpdateNotified && u.Kind != driver.UpdateUnmatched {
		return
	}
	t := &r.subs
	t.mu.Lock()
	t.sum.Outside++
	t.mu.Unlock()
}

// Subscriptions returns the subscription summary so far (nil when no
// session subscribed and changed anything, and no update came). Safe for
// concurrent use.
func (r *Recorder) Subscriptions() *results.SubscriptionSummary {
	t := &r.subs
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sum == (results.SubscriptionSummary{}) {
		return nil
	}
	s := t.sum
	s.Latency = results.LatencyOf(t.hist)
	return &s
}
