package driver

import (
	"hash/maphash"
	"slices"
)

// Verdict is one kind of replay-correctness fault.
type Verdict uint8

const (
	// VerdictLost: an expected message never arrived (progress k of n, a
	// GET-stream sequence number, or the response).
	VerdictLost Verdict = iota
	// VerdictDuplicated: the same event id, progress value or sequence
	// number arrived twice.
	VerdictDuplicated
	// VerdictReordered: progress values or sequence numbers went backwards.
	VerdictReordered
	// VerdictCrossStream: a message for another request (or stream) arrived.
	VerdictCrossStream
	// VerdictUnterminated: a stream that should end (its response was
	// delivered, or a resumed stream) did not end in time.
	VerdictUnterminated
	// VerdictUnresumable: the stream broke before any event id was seen.
	VerdictUnresumable
	// VerdictDeletedSessionAccepted: after DELETE, the server still served
	// the session id (it must answer 404).
	VerdictDeletedSessionAccepted
	// VerdictWrongMissingStatus: a request on a terminated session got a
	// status other than 404 (e.g. 400).
	VerdictWrongMissingStatus
	NumVerdicts
)

var verdictNames = [...]string{
	VerdictLost:                   "lost",
	VerdictDuplicated:             "duplicated",
	VerdictReordered:              "reordered",
	VerdictCrossStream:            "cross-stream",
	VerdictUnterminated:           "unterminated",
	VerdictUnresumable:            "unresumable",
	VerdictDeletedSessionAccepted: "deleted-session-accepted",
	VerdictWrongMissingStatus:     "wrong-missing-session-status",
}

func (v Verdict) String() string { return verdictNames[v] }

// VerdictMap returns the non-zero counts of c by verdict name
// ("lost": 2, …); empty when c has none.
func VerdictMap(c [NumVerdicts]int) map[string]int {
	m := map[string]int{}
	for i, n := range c {
		if n != 0 {
			m[Verdict(i).String()] = n
		}
	}
	return m
}

// Verdicts returns every verdict in report order.
func Verdicts() []Verdict {
	out := make([]Verdict, NumVerdicts)
	for i := range out {
		out[i] = Verdict(i)
	}
	return out
}

// Ledger is the replay ledger of one stream: what arrived, checked against
// the ground truth (the progress total the server announced, or the op's
// ExpectProgress). Counts is the verdict per kind. The zero value is ready
// to use; not safe for concurrent use.
type Ledger struct {
	Counts [NumVerdicts]int
	// Checked reports whether the ledger judged a stream (a POST answered
	// as SSE, or a GET stream).
	Checked  bool
	ids      []uint64  // hashes of event ids seen
	idArena  []byte    // the first 64 event ids, back to back
	idEnds   []int     // end offsets into idArena
	progress []float64 // progress values seen, in arrival order
	maxProg  float64
	total    float64 // announced total (0: none)
	seqs     []int64
	maxSeq   int64
}

var ledgerSeed = maphash.MakeSeed()

func (l *Ledger) reset() {
	*l = Ledger{ids: l.ids[:0], progress: l.progress[:0], seqs: l.seqs[:0], idArena: l.idArena[:0], idEnds: l.idEnds[:0]}
}

// restart clears what a stream saw but keeps the verdict counts, for a
// request that is re-sent as a new one (re-issue, re-initialize).
func (l *Ledger) restart() {
	counts, checked := l.Counts, l.Checked
	l.reset()
	l.Counts, l.Checked = counts, checked
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

// ProgressValues returns the progress values received, in arrival order.
func (l *Ledger) ProgressValues() []float64 { return slices.Clone(l.progress) }

// crossStream notes a message that belongs to another request or stream.
func (l *Ledger) crossStream() {
	l.Checked = true
	l.Counts[VerdictCrossStream]++
}

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
		l.Counts[VerdictDuplicated]++
		return false
	}
	l.ids = append(l.ids, h)
	if len(l.idEnds) < 64 {
		l.idArena = append(l.idArena, id...)
		l.idEnds = append(l.idEnds, len(l.idArena))
	}
	return true
}

// progressValue notes a notifications/progress value for this stream's token.
// A value seen before is a duplicate; a new value below the maximum is
// reordered (progress MUST increase: 2025-11-25 progress utility).
func (l *Ledger) progressValue(v, total float64) {
	l.Checked = true
	if total > l.total {
		l.total = total
	}
	if slices.Contains(l.progress, v) {
		l.Counts[VerdictDuplicated]++
		return
	}
	if len(l.progress) > 0 && v < l.maxProg {
		l.Counts[VerdictReordered]++
	}
	l.progress = append(l.progress, v)
	if v > l.maxProg {
		l.maxProg = v
	}
}

// seq notes a sequence number from a GET stream (expected 1, 2, 3 ...).
func (l *Ledger) seq(n int64) {
	l.Checked = true
	if slices.Contains(l.seqs, n) {
		l.Counts[VerdictDuplicated]++
		return
	}
	if len(l.seqs) > 0 && n < l.maxSeq {
		l.Counts[VerdictReordered]++
	}
	l.seqs = append(l.seqs, n)
	if n > l.maxSeq {
		l.maxSeq = n
	}
}

// finishOp closes the ledger of a request stream: the response must have
// arrived, and with a known total (announced, or expect) every progress
// value 1..total must have arrived. Each missing message counts as one
// lost.
func (l *Ledger) finishOp(gotResponse bool, expect int) {
	if !gotResponse {
		l.Counts[VerdictLost]++
	}
	total := l.total
	if expect > 0 {
		total = float64(expect)
	}
	if total > 0 {
		if missing := int(total) - len(l.progress); missing > 0 {
			l.Counts[VerdictLost] += missing
		}
	}
}

// finishSeq closes a GET-stream ledger: sequence numbers up to the highest
// announced (want) or seen must all have arrived.
func (l *Ledger) finishSeq(want int64) {
	top := max(want, l.maxSeq)
	if missing := top - int64(len(l.seqs)); missing > 0 {
		l.Counts[VerdictLost] += int(missing)
	}
}
