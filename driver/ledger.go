package driver

import (
	"hash/maphash"
	"slices"
	"strconv"
)

// Ledger is the replay ledger of one stream: what arrived, checked against
// the ground truth (the progress total the server announced, or the op's
// ExpectProgress). Counts is the verdict per kind; Evidence says, for the
// first faults, what arrived where. The zero value is ready to use; not
// safe for concurrent use.
type Ledger struct {
	Counts [NumVerdicts]int
	// Checked reports whether the ledger judged something: a stream (a POST
	// answered as SSE, a GET stream), or a JSON answer with a progress
	// expectation.
	Checked bool
	// Evidence describes the first faults (up to MaxEvidence), e.g.
	// "progress 3/5 arrived on the GET stream". Allocated only on faults.
	Evidence []string
	// LastEventID is the Last-Event-ID of the last resume that was accepted
	// and then delivered nothing (VerdictSilentResume), "" when none.
	LastEventID string

	ids      []uint64  // hashes of event ids seen
	idArena  []byte    // the first 64 event ids, back to back
	idEnds   []int     // end offsets into idArena
	progress []float64 // progress values seen on this stream, in arrival order
	maxProg  float64
	total    float64 // announced total (0: none)
	seqs     []int64 // the numbers above seqDone seen (at most 2 × seqWindow)
	maxSeq   int64
	seqLow   int64 // the lowest number seen
	seqDone  int64 // numbers up to here are judged (0: none)
}

// maxEventIDs bounds the event ids a ledger remembers to find duplicates.
const maxEventIDs = 2048

// MaxEvidence bounds Ledger.Evidence.
const MaxEvidence = 8

var ledgerSeed = maphash.MakeSeed()

func (l *Ledger) reset() {
	*l = Ledger{ids: l.ids[:0], progress: l.progress[:0], seqs: l.seqs[:0], idArena: l.idArena[:0], idEnds: l.idEnds[:0]}
}

// restart clears what a stream saw but keeps the verdict counts and
// evidence, for a request that is re-sent as a new one (re-issue,
// re-initialize).
func (l *Ledger) restart() {
	counts, checked, ev, last := l.Counts, l.Checked, l.Evidence, l.LastEventID
	l.reset()
	l.Counts, l.Checked, l.Evidence, l.LastEventID = counts, checked, ev, last
}

// fault counts one verdict and keeps what happened as evidence.
func (l *Ledger) fault(v Verdict, what string) {
	l.Checked = true
	l.Counts[v]++
	if len(l.Evidence) < MaxEvidence {
		l.Evidence = append(l.Evidence, v.String()+": "+what)
	}
}

// Faulty reports whether any verdict count is non-zero.
func (l *Ledger) Faulty() bool {
	for _, c := range l.Counts {
		if c != 0 {
			return true
		}
	}
	return false
}

// EventIDs returns the first 64 event ids the stream carried, in order (for
// the offenders file; allocates).
func (l *Ledger) EventIDs() []string {
	out := make([]string, len(l.idEnds))
	s := 0
	for i, e := range l.idEnds {
		out[i] = string(l.idArena[s:e])
		s = e
	}
	return out
}

// ProgressValues returns the progress values received on the stream, in
// arrival order.
func (l *Ledger) ProgressValues() []float64 { return slices.Clone(l.progress) }

// eventID notes an event id; a repeat is a duplicate. It reports whether
// the id is new (a duplicate event must not be processed again, so one
// replayed event counts once).
func (l *Ledger) eventID(id []byte) bool {
	if len(id) == 0 {
		return true
	}
	l.Checked = true
	h := maphash.Bytes(ledgerSeed, id)
	if slices.Contains(l.ids, h) {
		l.fault(VerdictDuplicated, "event id "+quoteShort(id)+" delivered twice")
		return false
	}
	if len(l.ids) >= maxEventIDs {
		// A stream that lives for hours: duplicates are looked for among
		// the last maxEventIDs/2 ids (a replay after a resume is recent).
		l.ids = append(l.ids[:0], l.ids[len(l.ids)-maxEventIDs/2:]...)
	}
	l.ids = append(l.ids, h)
	if len(l.idEnds) < 64 {
		l.idArena = append(l.idArena, id...)
		l.idEnds = append(l.idEnds, len(l.idArena))
	}
	return true
}

// progressValue notes a notifications/progress value for this stream's
// token. A value seen before is a duplicate; a new value below the maximum
// is reordered (progress MUST increase: 2025-11-25 progress utility).
func (l *Ledger) progressValue(v, total float64) {
	l.Checked = true
	if total > l.total {
		l.total = total
	}
	if slices.Contains(l.progress, v) {
		l.fault(VerdictDuplicated, "progress "+fmtNum(v)+" delivered twice")
		return
	}
	if len(l.progress) > 0 && v < l.maxProg {
		l.fault(VerdictReordered, "progress "+fmtNum(v)+" after "+fmtNum(l.maxProg))
	}
	l.progress = append(l.progress, v)
	if v > l.maxProg {
		l.maxProg = v
	}
}

// seqWindow bounds the sequence numbers a ledger keeps one by one: a
// GET stream lives as long as its session (hours in a soak), so numbers
// more than seqWindow below the highest are judged then and kept as
// counts (a gap there is lost; one of them arriving later is reordered).
// The ledger's memory and its cost per number stay bounded.
const seqWindow = 1024

// seq notes a sequence number from a GET stream (expected 1, 2, 3 ...).
func (l *Ledger) seq(n int64) {
	l.Checked = true
	if l.seqDone > 0 && n <= l.seqDone {
		l.fault(VerdictReordered, "notification seq "+strconv.FormatInt(n, 10)+" more than "+strconv.Itoa(seqWindow)+" behind "+strconv.FormatInt(l.maxSeq, 10))
		return
	}
	if slices.Contains(l.seqs, n) {
		l.fault(VerdictDuplicated, "notification seq "+strconv.FormatInt(n, 10)+" delivered twice")
		return
	}
	if (len(l.seqs) > 0 || l.seqDone > 0) && n < l.maxSeq {
		l.fault(VerdictReordered, "notification seq "+strconv.FormatInt(n, 10)+" after "+strconv.FormatInt(l.maxSeq, 10))
	}
	if l.seqDone == 0 && len(l.seqs) == 0 || n < l.seqLow {
		l.seqLow = n
	}
	l.seqs = append(l.seqs, n)
	if n > l.maxSeq {
		l.maxSeq = n
	}
	if len(l.seqs) >= 2*seqWindow {
		l.judgeSeqsBelow(l.maxSeq - seqWindow)
	}
}

// judgeSeqsBelow judges the numbers up to done: those never seen between
// the lowest seen and done are lost; the seen ones leave the list.
func (l *Ledger) judgeSeqsBelow(done int64) {
	from := max(l.seqLow, l.seqDone+1)
	if done < from {
		return
	}
	seen := int64(0)
	kept := l.seqs[:0]
	for _, v := range l.seqs {
		if v <= done {
			seen++
		} else {
			kept = append(kept, v)
		}
	}
	l.seqs = kept
	if missing := done - from + 1 - seen; missing > 0 {
		l.Counts[VerdictLost] += int(missing) - 1
		l.fault(VerdictLost, strconv.FormatInt(missing, 10)+" numbered notifications between "+strconv.FormatInt(from, 10)+" and "+strconv.FormatInt(done, 10)+" never arrived")
	}
	l.seqDone = done
}

// finishOp closes the ledger of a request: the response must have arrived
// (anywhere), and with a known total (announced, or expect) every progress
// value 1..total must have arrived on the request's stream, or elsewhere
// (elsewhere: the values that arrived on another stream of the session,
// already counted misrouted; late ones are in the stream's own values).
// Each message that never arrived anywhere counts as one lost.
func (l *Ledger) finishOp(gotResponse bool, expect int, elsewhere []float64, elsewhereTotal float64) {
	if expect > 0 || len(elsewhere) > 0 {
		l.Checked = true
	}
	if !gotResponse {
		l.fault(VerdictLost, "the response never arrived")
	}
	total := max(l.total, elsewhereTotal)
	if expect > 0 {
		total = float64(expect)
	}
	if total <= 0 {
		return
	}
	got := len(l.progress)
	for _, v := range elsewhere {
		if !slices.Contains(l.progress, v) {
			got++
		}
	}
	if missing := int(total) - got; missing > 0 {
		l.Counts[VerdictLost] += missing - 1
		l.fault(VerdictLost, strconv.Itoa(missing)+" of "+strconv.Itoa(int(total))+" progress notifications never arrived")
	}
}

// finishSeq closes a GET-stream ledger: every sequence number between the
// first and the highest seen must have arrived (numbers sent before the
// stream was open cannot arrive, so the first seen is the start).
func (l *Ledger) finishSeq() {
	if len(l.seqs) == 0 && l.seqDone == 0 {
		return
	}
	l.judgeSeqsBelow(l.maxSeq)
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// quoteShort quotes b for evidence, cut to 64 bytes.
func quoteShort(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "…"
	}
	return strconv.Quote(string(b))
}
