package metrics

import (
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// Offender is one stream the replay ledger found faulty, kept for
// debugging (offenders.json in the results directory).
type Offender struct {
	Op       string         `json:"op"`
	Start    time.Time      `json:"start"`
	Class    string         `json:"class"`
	Error    string         `json:"error,omitempty"`
	Verdicts map[string]int `json:"verdicts"`
	EventIDs []string       `json:"event_ids"`
	Progress []float64      `json:"progress,omitempty"`
	Resumes  int            `json:"resumes"`
	Reissues int            `json:"reissues,omitempty"`
}

type offenders struct {
	mu   sync.Mutex
	max  int
	list []Offender
	seen int64
}

func (o *offenders) add(op string, res *driver.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen++
	if len(o.list) >= o.max {
		return
	}
	of := Offender{
		Op:       op,
		Start:    res.Start,
		Class:    res.Class.String(),
		Verdicts: map[string]int{},
		EventIDs: res.Ledger.EventIDs(),
		Progress: res.Ledger.ProgressValues(),
		Resumes:  len(res.Resumes),
		Reissues: res.Reissues,
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
}
