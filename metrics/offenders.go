package metrics

import (
	"slices"
	"sync"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

func (o *offenders) add(op string, res *driver.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen++
	if len(o.list) >= o.max {
		return
	}
	of := results.Offender{
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
func (r *Recorder) AddOffender(of results.Offender) {
	r.offenders.mu.Lock()
	defer r.offenders.mu.Unlock()
	r.offenders.seen++
	if len(r.offenders.list) < r.offenders.max {
		r.offenders.list = append(r.offenders.list, of)
	}
}

// Offenders returns the first faulty streams (up to 100) and how many
// faulty streams there were in all.
func (r *Recorder) Offenders() ([]results.Offender, int64) {
	r.offenders.mu.Lock()
	defer r.offenders.mu.Unlock()
	return append([]results.Offender(nil), r.offenders.list...), r.offenders.seen
}

type offenders struct {
	mu   sync.Mutex
	max  int
	list []results.Offender
	seen int64
	// checks are the first failed checks (checks.go), checkSeen all.
	checks    []results.CheckOffender
	checkSeen int64
}
