package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/driver"
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

type offenders struct {
	mu   sync.Mutex
	max  int
	list []Offender
	seen int64
	// checks are the first failed checks (checks.go), checkSeen all.
	checks    []CheckOffender
	checkSeen int64
}

func (o *offenders) add(op string, res *driver.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen++
	if len(o.list) >= o.max {
		return
	}
	of := Offender{
		Op:          op,
		Intended:    res.Intended,
		Start:       res.Start,
		Class:       res.Class.String(),
		Status:      res.Status,
		Verdicts:    map[string]int{},
		Evidence:    slices.Clone(res.Ledger.Evidence),
		EventIDs:    res.Ledger.EventIDs(),
		Progress:    res.Ledger.ProgressValues(),
		Resumes:     len(res.Resumes),
		LastEventID: res.Ledger.LastEventID,
		Reissues:    res.Reissues,
	}
	if res.Err != nil {
		of.Error = res.Err.Error()
	}
	for i, c := range res.Ledger.Counts {
		if c != 0 {
			of.Verdicts[driver.Verdict(i).String()] = c
		}
	}
	o.list = append(o.list, of)
}

// AddOffender records a faulty stream that is not an op's (a GET stream).
func (r *Recorder) AddOffender(of Offender) {
	r.offenders.mu.Lock()
	defer r.offenders.mu.Unlock()
	r.offenders.seen++
	if len(r.offenders.list) < r.offenders.max {
		r.offenders.list = append(r.offenders.list, of)
	}
}

// Offenders returns the first faulty streams (up to 100) and how many
// faulty streams there were in all.
func (r *Recorder) Offenders() ([]Offender, int64) {
	r.offenders.mu.Lock()
	defer r.offenders.mu.Unlock()
	return append([]Offender(nil), r.offenders.list...), r.offenders.seen
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
