package metrics

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// The reconnect bounds in the summary: capped retry waits and streams
// given up at the resume bound, over shards; an op cut by the run's end
// keeps its resume attempts, capped waits, events and bytes in the counts
// (interrupted, out of latency and errors); a merge of two summaries adds
// the counts and keeps the largest hint and cap.
func TestRecorderResumeBounds(t *testing.T) {
	rec := NewRecorder([]string{"call"}, 2)
	t0 := time.Unix(1000, 0)
	huge := driver.RetryCap{N: 1, HintMaxMS: 2147483648, Cap: 30 * time.Second}

	cut := result(0, 0, 0, 10, driver.ClassCanceled, 0) // the run's end cut it
	cut.Resumes = []driver.Resume{{At: t0, Hint: 0, OK: true}, {At: t0, Hint: 0, OK: true}}
	cut.RetryCapped = huge
	cut.Events, cut.BytesIn = 3, 300
	rec.Shard(0).Record(cut)

	limited := result(0, 0, 0, 10, driver.ClassResumeLimit, 200)
	limited.Resumes = make([]driver.Resume, 100)
	rec.Shard(1).Record(limited)

	ok := result(0, 0, 0, 10, driver.ClassOK, 200)
	ok.RetryCapped = driver.RetryCap{N: 2, HintMaxMS: 40000, Cap: 30 * time.Second}
	// A capped wait honoured in full is not early, though the hint asked
	// for more; one made before the cap is.
	ok.Resumes = []driver.Resume{{At: t0, Hint: 40000, Capped: true, Waited: 30 * time.Second, Delay: 30 * time.Second, OK: true},
		{At: t0, Hint: 40000, Capped: true, Waited: 30 * time.Second, Delay: 29 * time.Second}}
	rec.Shard(1).Record(ok)

	rec.Tick(time.Now(), time.Time{})
	ops, all := rec.Summarize(1)
	for _, o := range []OpSummary{ops[0], all} {
		r := o.Resumes
		if r == nil || r.Attempts != 104 || r.Accepted != 3 || r.Early != 1 || r.RetryCapped != 3 || r.RetryHintMaxMS != 2147483648 || r.RetryCapMS != 30000 || r.Limited != 1 {
			t.Fatalf("%s: resumes %+v: want 104 attempts (3 accepted, 1 early), 3 capped waits (hint 2147483648 ms, cap 30000 ms), 1 stream given up", o.Name, r)
		}
		if o.Count != 2 || o.Errors != 1 || o.Interrupted != 1 || o.Events != 3 || o.BytesIn != 300 || o.ErrorsByClass["resume-limit"] != 1 {
			t.Fatalf("%s: count %d errors %d interrupted %d events %d bytes %d classes %v", o.Name, o.Count, o.Errors, o.Interrupted, o.Events, o.BytesIn, o.ErrorsByClass)
		}
	}
	m := sumResumes([]*ResumeSummary{all.Resumes, {Attempts: 1, RetryCapped: 1, RetryHintMaxMS: 5, RetryCapMS: 60000, Limited: 2}}, nil, nil)
	if m.Attempts != 105 || m.RetryCapped != 4 || m.RetryHintMaxMS != 2147483648 || m.RetryCapMS != 60000 || m.Limited != 3 {
		t.Fatalf("merged %+v", m)
	}
}

// GET streams: their capped waits and the streams given up at the rate
// bound, from the sessions' final stream stats.
func TestGETStreamsResumeBounds(t *testing.T) {
	rec := NewRecorder([]string{"call"}, 1)
	rec.RecordGETOpen(nil)
	rec.RecordClose(nil, 0, driver.Hygiene{}, driver.StreamStats{Opened: 1, Resumes: make([]driver.Resume, 100), ResumeLimited: true, LastError: "resume-limit"})
	rec.RecordGETOpen(nil)
	rec.RecordClose(nil, 0, driver.Hygiene{}, driver.StreamStats{Opened: 1, Resumes: []driver.Resume{{OK: true, Hint: -1}},
		RetryCapped: &driver.RetryCap{N: 1, HintMaxMS: 2147483648, Cap: 30 * time.Second}})
	g := rec.GETStreams()
	if g == nil || g.Resumes == nil || g.Resumes.Attempts != 101 || g.Resumes.Limited != 1 || g.Resumes.RetryCapped != 1 || g.Resumes.RetryHintMaxMS != 2147483648 || g.Resumes.RetryCapMS != 30000 {
		t.Fatalf("GET streams %+v resumes %+v", g, g.Resumes)
	}
}
