package results

import (
	"time"
)

// Offender is one stream the replay ledger found faulty, kept for
// debugging (offenders.json in the results directory).
type Offender struct {
	Op       string         `json:"op"`
	Intended time.Time      `json:"intended_start,omitzero"` // when the schedule wanted the op to start
	Start    time.Time      `json:"start,omitzero"`          // when it was sent (a GET stream: first opened)
	Class    string         `json:"class"`                   // the op's error class ("ok" when it completed)
	Status   int            `json:"status,omitempty"`        // the HTTP status (hygiene: the deleted session's answer)
	Error    string         `json:"error,omitempty"`
	Verdicts map[string]int `json:"verdicts"`
	// Evidence says what arrived where, for the first faults.
	Evidence []string  `json:"evidence,omitempty"`
	EventIDs []string  `json:"event_ids,omitempty"`
	Progress []float64 `json:"progress,omitempty"`
	Resumes  int       `json:"resumes"`
	// LastEventID is the Last-Event-ID of a resume that was accepted and
	// then delivered nothing (silent-resume).
	LastEventID string `json:"silent_resume_last_event_id,omitempty"`
	Reissues    int    `json:"reissues,omitempty"`
}

// OffendersFile is offenders.json: the first faulty streams (up to 100)
// with their event ids, and how many there were in all.
type OffendersFile struct {
	Faulty int64      `json:"faulty_streams"`
	First  []Offender `json:"first"`
	// CheckFailures counts the failed checks (one op failing two checks
	// counts two); FirstChecks are the first (up to 100), with the op's
	// start and the value seen.
	CheckFailures int64           `json:"check_failures,omitempty"`
	FirstChecks   []CheckOffender `json:"first_check_failures,omitempty"`
}
