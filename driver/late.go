package driver

import (
	"slices"
	"time"
)

// Progress that comes after its response on another stream. A request
// whose progress expectation (Op.ExpectProgress) was not met when its
// response arrived may still get the rest on another stream of the
// session (a server answering JSON sends it on the GET stream). The lane
// does not wait for it: Do returns at the response with Result.Pending
// set, the request's mailbox stays registered with the session (still
// matched by the GET stream and the other lanes' streams), and the
// caller settles the Result beside the lane (Result.Settle, on a copy:
// Result.Clone), which closes the ledger once the rest came or
// mailboxGrace after the response.

// Pending is the rest of a request's ledger, judged once the progress it
// still expects came on another stream or mailboxGrace after its response
// (Result.Settle).
type Pending struct {
	late    *lateBoxes
	mb      *inflight
	expect  int
	gotResp bool
	due     time.Time
}

// Settle closes the ledger of a Result that Do left pending (Pending
// set): it waits until the request's expected progress came on another
// stream of the session, or until mailboxGrace after its response (250
// ms at most), then judges what never came lost and what came elsewhere
// misrouted. Without Pending it does nothing. It may run on any goroutine,
// while the lane runs other requests, on a Result no other goroutine
// uses (Clone the lane's).
func (r *Result) Settle() {
	p := r.Pending
	if p == nil {
		return
	}
	r.Pending = nil
	p.mb.awaitUntil(p.expect, len(r.Ledger.progress), p.due)
	p.late.remove(p.mb)
	closeMailbox(p.mb, &r.Ledger, p.gotResp, p.expect)
}

// Clone returns a copy of r that shares no memory with it (r's next Reset
// and Do leave it alone); a pending judgement moves to the copy. It
// allocates: meant for Results that Do left pending.
func (r *Result) Clone() *Result {
	c := *r
	c.Resumes = slices.Clone(r.Resumes)
	l := &c.Ledger
	l.Evidence = slices.Clone(r.Ledger.Evidence)
	l.progress = slices.Clone(r.Ledger.progress)
	l.ids, l.idArena, l.idEnds, l.seqs = nil, nil, nil, nil
	l.idEnds = slices.Clone(r.Ledger.idEnds)
	l.idArena = slices.Clone(r.Ledger.idArena)
	r.Pending = nil
	return &c
}
