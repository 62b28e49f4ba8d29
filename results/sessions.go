package results

import "github.com/mcpbench/mcpbench/outcome"

// The recorder's tallies of sessions, their GET streams and the
// deleted-session checks: what the summary's Sessions and GETStreams say.
// They are recorded off the hot path (set-up, teardown), under one mutex.

// ResumeSummaryOf is the summary of a GET streams' reconnect tally (nil
// when nothing happened): its Classes hold the streams given up at the
// resume bound only.
func ResumeSummaryOf(a *OpStats) *ResumeSummary {
	limited := a.Classes[outcome.ClassResumeLimit]
	if a.Resumes == 0 && a.RetryCapped.N == 0 && limited == 0 {
		return nil
	}
	r := &ResumeSummary{Attempts: a.Resumes, Accepted: a.ResumesOK, Early: a.EarlyResume,
		TimeToResume: LatencyOf(a.Resume), Wait: LatencyOf(a.Wait), ViaLink: a.ResumesLink, Limited: limited}
	r.setCap(a.RetryCapped)
	return r
}
