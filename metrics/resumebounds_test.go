package metrics

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

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
