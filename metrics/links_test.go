package metrics

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// Stream links (SEP-1335): the summary counts resume attempts sent to a
// rel="stream" URL, streams resumed through one (an accepted attempt), and
// refused cross-origin links; the timeline keeps the storm-caused link
// attempts apart (LinksIn, for the storm analysis);
// a merge of two summaries adds them.
func TestRecorderStreamLinks(t *testing.T) {
	rec := NewRecorder([]string{"call"}, 1)
	t0 := time.Unix(1000, 0)
	tl := NewTimeline(t0, 10*time.Second)
	rec.SetTimeline(tl)
	for i, rs := range [][]driver.Resume{
		{{At: t0.Add(time.Second), Link: true, Storm: true, OK: true, Hint: -1}},                                                         // resumed at the link
		{{At: t0.Add(time.Second), Link: true, Storm: true, Hint: -1}, {At: t0.Add(2 * time.Second), Link: true, Storm: true, Hint: -1}}, // never accepted
		{{At: t0.Add(2 * time.Second), OK: true, Hint: -1}},                                                                              // at the endpoint
		nil, // not cut
	} {
		r := result(0, 0, 0, 10, driver.ClassOK, 200)
		r.Resumes = rs
		r.Ledger.Checked = true
		r.LinksRefused = i % 2 // 2 refused in all
		rec.Shard(0).Record(r)
	}
	rec.Tick(time.Now(), time.Time{})
	ops, _ := rec.Summarize(1)
	o := ops[0]
	if o.Resumes == nil || o.Resumes.Attempts != 4 || o.Resumes.ViaLink != 3 {
		t.Fatalf("resumes %+v: want 4 attempts, 3 via the link", o.Resumes)
	}
	if o.Ledger == nil || o.Ledger.Streams != 4 || o.Ledger.ViaLink != 1 || o.Ledger.LinksRefused != 2 {
		t.Fatalf("ledger %+v: want 4 streams, 1 resumed through its link, 2 links refused", o.Ledger)
	}
	tlAll := int64(0)
	for i := range tl.Len() {
		a, _ := tl.At(i)
		tlAll += a
	}
	bin := int(time.Second / tl.Bin())
	if tlAll != 4 || tl.LinksIn(0, tl.Len()) != 3 || tl.LinksIn(0, bin+1) != 2 || tl.LinksIn(2*bin, tl.Len()) != 1 {
		t.Fatalf("timeline: %d attempts, links %d (first second %d, from 2 s %d); want 4, 3 (2, 1)", tlAll, tl.LinksIn(0, tl.Len()), tl.LinksIn(0, bin+1), tl.LinksIn(2*bin, tl.Len()))
	}
	m := sumResumes([]*ResumeSummary{o.Resumes, o.Resumes}, nil, nil)
	l := sumLedgers([]*LedgerSummary{o.Ledger, o.Ledger})
	if m.ViaLink != 6 || l.ViaLink != 2 || l.LinksRefused != 4 {
		t.Fatalf("merged: resumes %+v ledger %+v", m, l)
	}
}
