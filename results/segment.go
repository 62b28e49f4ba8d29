package results

import "time"

// SegmentInfo says which execution segment of a test a run was (run.json
// and summary.json; see workload/segment.go): the segment's FROM:TO share
// of the test, the sequence it belongs to, and the aligned start.
type SegmentInfo struct {
	Segment  string `json:"segment"`  // FROM:TO, e.g. "1/4:1/2"
	Sequence string `json:"sequence"` // the sequence's points, e.g. "0,1/4,1/2,3/4,1"
	Index    int    `json:"index"`    // the segment's place in the sequence (0-based)
	Count    int    `json:"count"`    // segments in the sequence
	// StartAt is the time the run's clock was to start (--start-at);
	// zero: it started when its set-up ended.
	StartAt time.Time `json:"start_at,omitzero"`
}

// SegmentResult is one segment of a merged run (summary.json's segments):
// where its results are, what it ran, and its own generator cost (each
// segment is a process of its own).
type SegmentResult struct {
	Dir         string       `json:"dir"`
	Segment     *SegmentInfo `json:"segment,omitempty"`
	Started     time.Time    `json:"started"`
	DurationS   float64      `json:"duration_s"`
	Count       int64        `json:"count"` // completed ops
	Errors      int64        `json:"errors"`
	Dropped     int64        `json:"dropped"`
	Rate        float64      `json:"rate"`
	VUs         int          `json:"vus"`
	Interrupted bool         `json:"interrupted,omitempty"`
	StopReason  string       `json:"stop_reason,omitempty"`
	// Generator is the segment's own cost: CPU, cores, memory, start lag.
	Generator Generator `json:"generator"`
	// Storms are the segment's storm waves (a merged run does not
	// analyse them again: the reconnect timeline is not in the files).
	Storms []Wave `json:"storms,omitempty"`
	// Missing names the files the segment lacked (the merge used what
	// was there).
	Missing []string `json:"missing,omitempty"`
}
