package outcome

import "time"

// Resume records one resume attempt of a broken stream.
type Resume struct {
	// At is when the reconnect attempt was sent.
	At time.Time
	// Hint is the server's retry hint in effect (ms), -1 when none was sent.
	Hint int
	// Waited is the wait the reconnect policy chose.
	Waited time.Duration
	// Capped marks a wait cut to Config.MaxRetryWait: Hint asked for more.
	Capped bool
	// Delay is the actual time from the break to the reconnect attempt
	// (Waited plus timer lag; for later attempts, the earlier attempts too).
	Delay time.Duration
	// TimeToResume runs from the break to the resumed stream's headers (or
	// to the failure of the attempt).
	TimeToResume time.Duration
	// Clean reports a break by an orderly end of stream (a server polling
	// per SEP-1699, or a FIN), as opposed to an error (RST, timeout).
	Clean bool
	// OK reports whether the server accepted the resume.
	OK bool
	// Status is the HTTP status of the resume GET (0 on transport error).
	Status int
	// Link marks a resume sent to the stream's rel="stream" URL (SEP-1335)
	// instead of the MCP endpoint.
	Link bool
	// Reopen marks a re-open without Last-Event-ID (a GET stream that
	// carried no event id): a reconnect attempt that cannot replay what
	// was sent meanwhile.
	Reopen bool
	// Storm marks an attempt after a break a storm wave caused: the body
	// that broke says so (httpclient.StormCutReporter, which the chaos
	// package's bodies implement), so the reconnects a storm caused are told
	// from a server's normal stream ends.
	Storm bool
}

// RetryCap counts reconnect waits whose retry hint was over
// Config.MaxRetryWait and were cut to it. A wait is counted when it
// begins, so one the run's end cut short counts too.
type RetryCap struct {
	N         int64         // waits capped
	HintMaxMS int64         // the largest hint capped, in ms
	Cap       time.Duration // the cap applied (Config.MaxRetryWait)
}

// Add adds o's counts to c.
func (c *RetryCap) Add(o RetryCap) {
	c.N += o.N
	c.HintMaxMS = max(c.HintMaxMS, o.HintMaxMS)
	c.Cap = max(c.Cap, o.Cap)
}
