package outcome

// Verdict is one kind of replay-correctness fault.
type Verdict uint8

const (
	// VerdictLost: an expected message never arrived anywhere (progress k of
	// n, a GET-stream sequence number, or the response). A message that
	// arrived on another stream of the session is misrouted, not lost; one
	// that arrived after its response is late, not lost.
	VerdictLost Verdict = iota
	// VerdictDuplicated: the same event id, progress value, sequence number
	// or response arrived twice.
	VerdictDuplicated
	// VerdictReordered: progress values or sequence numbers went backwards.
	VerdictReordered
	// VerdictCrossStream: a message of another session, or of no request
	// this session made, arrived on this stream (progress tokens are unique
	// across the run, so a foreign token is always recognised).
	VerdictCrossStream
	// VerdictMisrouted: a message of another request of the same session
	// arrived on this stream, or a request's message arrived on the
	// standalone GET stream (2025-11-25 transports §Sending Messages, item 5:
	// messages on a request's stream SHOULD relate to that request;
	// §Listening, item 4: those on the GET stream SHOULD be unrelated to any
	// running request).
	VerdictMisrouted
	// VerdictLate: a message of this request arrived on its stream after
	// its response (a replay out of order, or a notification sent after the
	// result).
	VerdictLate
	// VerdictUnterminated: a stream that should end (its response was
	// delivered, or a resumed stream) did not end in time.
	VerdictUnterminated
	// VerdictUnresumable: the stream broke before any event id was seen.
	VerdictUnresumable
	// VerdictSilentResume: a resume (GET with Last-Event-ID) was accepted
	// but the stream delivered nothing before it idled out, whatever
	// happened after.
	VerdictSilentResume
	// VerdictDeletedSessionAccepted: after DELETE, the server still served
	// the session id (it must answer 404).
	VerdictDeletedSessionAccepted
	// VerdictWrongMissingStatus: a request on a terminated session got a
	// status other than 404 (e.g. 400).
	VerdictWrongMissingStatus
	// VerdictAfterCancel: a message of a cancelled request (its response,
	// its progress, any message on its stream) after the cancel, in a call
	// whose tool provably ran on to a success result after the server had
	// the client's notifications/cancelled, or progress the server wrote
	// after it acknowledged the cancel (cancel.go; 2025-11-25
	// cancellation §Behavior Requirements: the receiver SHOULD stop
	// processing and not send a response; see Op.Cancel).
	VerdictAfterCancel
	NumVerdicts
)

var verdictNames = [...]string{
	VerdictLost:                   "lost",
	VerdictDuplicated:             "duplicated",
	VerdictReordered:              "reordered",
	VerdictCrossStream:            "cross-stream",
	VerdictMisrouted:              "misrouted",
	VerdictLate:                   "late",
	VerdictUnterminated:           "unterminated",
	VerdictUnresumable:            "unresumable",
	VerdictSilentResume:           "silent-resume",
	VerdictDeletedSessionAccepted: "deleted-session-accepted",
	VerdictWrongMissingStatus:     "wrong-missing-session-status",
	VerdictAfterCancel:            "after-cancel",
}

// StreamVerdicts are the verdicts a stream's ledger can give (the others
// judge sessions: see SessionVerdicts).
var StreamVerdicts = []Verdict{VerdictLost, VerdictDuplicated, VerdictReordered, VerdictCrossStream, VerdictMisrouted,
	VerdictLate, VerdictUnterminated, VerdictUnresumable, VerdictSilentResume, VerdictAfterCancel}

// SessionVerdicts are the verdicts of the deleted-session check.
var SessionVerdicts = []Verdict{VerdictDeletedSessionAccepted, VerdictWrongMissingStatus}

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
	return append(append(make([]Verdict, 0, NumVerdicts), StreamVerdicts...), SessionVerdicts...)
}
