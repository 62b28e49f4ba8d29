package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// Op is one MCP operation ready to send: a request method and its params.
// Build it with NewOp; an Op is immutable and safe for concurrent use.
type Op struct {
	// Name labels the op in results ("tools/call:echo" by default).
	Name string
	// Method is the JSON-RPC method (tools/call, tools/list, resources/list,
	// resources/read, prompts/list, prompts/get, ping, ...).
	Method string
	// Params is the params object without _meta; nil for none.
	Params json.RawMessage
	// Progress attaches a progressToken (_meta.progressToken) so the server
	// may stream notifications/progress (2025-11-25 progress utility).
	Progress bool
	// Expect is the ground truth for the replay ledger: the number of
	// progress notifications the op must receive (0: unknown, take the
	// server's announced total if any).
	ExpectProgress int
	// ParamHeaders are the Mcp-Param-* headers of a tools/call under
	// 2026-07-28 (see ParamHeaders), set before the op is first sent.
	ParamHeaders [][2]string
	// Render, when set, renders the params of each request of the op
	// (data-driven arguments, e.g. workload's argument templates): it
	// appends the params object, without _meta, to dst and returns it;
	// Params then holds the params as written (for Mcp-Name and display).
	// Do calls it once per request, before the first attempt (a retry or
	// re-issue resends the same params), with the RenderContext of the
	// Result it was given and a buffer the session reuses, so a Render
	// that does not allocate keeps the hot path allocation-free. It must
	// be safe for concurrent use (every session calls it) and must return
	// a JSON object. RequestPlaceholder in its output is replaced as in
	// Params when Params holds it. An op with Render cannot carry
	// Mcp-Param-* headers (they would not follow the arguments): PrepareOps
	// refuses such an op.
	Render func(dst []byte, c RenderContext) []byte
	// Cancel cancels a share of the op's calls still in flight after a
	// while (nil: never; see cancel.go).
	Cancel *Cancel
	// Changes is the URI of the resource a call of this op changes (such
	// as the reference server's touch tool): a session subscribed to it
	// expects a notifications/resources/updated (see subscribe.go).
	Changes string
	// Inspect, when set, is given the result member of each response of
	// the op that carries one (a JSON object; each page of a list op; a
	// tools/call result with isError too, Result.Err set after), on the
	// session's goroutine, before Do returns. result points into the
	// session's read buffer and is valid only during the call: copy what
	// you keep. res is the Result Do fills (res.VU, res.Iteration and
	// res.Op say whose). It must be safe for concurrent use (every session
	// calls it) and must not block. nil: no inspection, no cost.
	Inspect func(result []byte, res *Result)
	// MaxPages bounds the pages a list op follows (0: DefaultMaxPages;
	// see paginate.go).
	MaxPages int

	list       bool   // a list method: follow nextCursor
	subURI     string // resources/subscribe and unsubscribe: the uri
	isToolCall bool
	mcpName    string   // Mcp-Name value (name or uri)
	parts      [][]byte // Params split at RequestPlaceholder (nil: none)
	// fastest is, for an op with Cancel, the shortest time in ns from a
	// request's send to its success answer over all sessions (0: none
	// yet): how long the tool takes at least (cancel.go).
	fastest atomic.Int64
}

// RequestPlaceholder in an op's params is replaced, per logical request,
// by an id unique in the run ("<session>-<n>") that stays the same when
// the request is re-issued or retried: a server can then tell a re-issue
// from a new request (the reference server's count tool uses it).
const RequestPlaceholder = "${request}"

// NewOp validates params (a JSON object or empty) and returns the op.
func NewOp(name, method string, params json.RawMessage, progress bool) (*Op, error) {
	p := bytes.TrimSpace(params)
	if len(p) > 0 {
		if p[0] != '{' || !json.Valid(p) {
			return nil, fmt.Errorf("op %s: params must be a JSON object", name)
		}
	}
	if method == "" {
		return nil, fmt.Errorf("op %s: empty method", name)
	}
	if name == "" {
		name = method
	}
	op := &Op{Name: name, Method: method, Params: p, Progress: progress, isToolCall: method == "tools/call", mcpName: mcpName(method, p)}
	op.list, op.subURI = isListMethod(method), subscribeURI(method, p)
	if bytes.Contains(p, []byte(RequestPlaceholder)) {
		op.parts = bytes.Split(p, []byte(RequestPlaceholder))
	}
	return op, nil
}

// RenderContext is what Op.Render may make a request's params of: who
// sends it. Do takes it from the Result (VU, Iteration).
type RenderContext struct {
	VU        int   // the caller's VU number (Result.VU)
	Iteration int64 // the caller's iteration of that VU (Result.Iteration)
}

// Result is what one operation did. The driver fills it; the caller sets
// Op and Intended (and VU and Iteration for an op with Render) and reuses
// the value across operations (Reset keeps the Resumes backing array, so
// steady-state operation does not allocate).
//
// Times are wall-clock with Go's monotonic reading; durations derive from
// them: response time = End − Intended (coordinated-omission corrected),
// service time = End − Start, time to first byte = FirstByte − Start.
type Result struct {
	Op int // index of the op in the caller's mix
	// VU and Iteration tell who sends the op, for Op.Render (data-driven
	// arguments): set by the caller with Op and Intended (workload: its VU
	// number from 0, and that VU's ops before this one).
	VU        int
	Iteration int64

	Intended  time.Time // when the schedule wanted the op to start
	Start     time.Time // when the request was sent
	FirstByte time.Time // when response headers arrived (zero if none)
	End       time.Time // when the operation finished

	Status   int   // HTTP status of the last response (0: none)
	Class    Class // error class, ClassOK on success
	Err      error // the error, nil on success
	BytesIn  int64 // response bytes read (bodies)
	BytesOut int64 // request bytes sent (bodies)
	Events   int   // SSE events with data (messages) received
	Progress int   // notifications/progress for this request received
	Resumes  []Resume
	Reinits  int // sessions re-initialized after a 404
	Reissues int // requests re-sent after an unresumable break (2026-07-28: any break)
	// Wasted is the time spent on attempts that broke and were re-issued:
	// work the server may have done for nothing.
	Wasted time.Duration
	// LinksRefused counts rel="stream" links (SEP-1335) of this op's
	// streams that named another origin: refused, never followed.
	LinksRefused int
	// RetryCapped counts the reconnect waits of the op's stream whose
	// retry hint was over Config.MaxRetryWait and were cut to it.
	RetryCapped RetryCap
	// InputRounds counts retries answering input_required results
	// (2026-07-28 multi round-trip requests).
	InputRounds int
	// Pages counts the pages a list op fetched (1 + the nextCursors it
	// followed; 0 for other ops).
	Pages int
	// Cancelled: the op's request was cancelled (Op.Cancel). Its class is
	// ok; what arrived after the cancel is in CancelRaced and the ledger
	// (VerdictAfterCancel).
	Cancelled bool
	// CancelRaced counts messages of a cancelled request that arrived
	// after the cancel was sent and do not prove the server went on: an
	// error answer (it stopped), or what it may have written before it
	// had the cancel (the race the spec allows; cancel.go).
	CancelRaced int
	// Notifications counts the log messages, list changes and resource
	// updates the op's streams carried.
	Notifications Notifications
	// TailWait is how long the caller waited, after the response, on a
	// response stream that did not end: the stream was judged
	// unterminated after lingerTimeout (2 s). Not latency (End is taken
	// at the response), but the caller (a VU) started nothing meanwhile;
	// 0 when the stream ended.
	TailWait time.Duration

	Ledger Ledger // replay correctness of the op's response stream

	// Checks is what the op's checks found in its results (checks.go;
	// zero without checks).
	Checks CheckOutcome

	// Pending, when set, is the part of Ledger still to be judged: the
	// request's expected progress had not all come when its response did,
	// and may still come on another stream. Settle it (late.go) before
	// reading Ledger; Do left the lane free.
	Pending *Pending
}

// Reset clears r for reuse, keeping allocated buffers.
func (r *Result) Reset() {
	res := r.Resumes[:0]
	l := r.Ledger
	l.reset()
	*r = Result{Resumes: res, Ledger: l}
}

// ResponseTime is End − Intended (End − Start when Intended is unset).
func (r *Result) ResponseTime() time.Duration {
	if r.Intended.IsZero() {
		return r.End.Sub(r.Start)
	}
	return r.End.Sub(r.Intended)
}

// ServiceTime is End − Start.
func (r *Result) ServiceTime() time.Duration { return r.End.Sub(r.Start) }

// TTFB is FirstByte − Start, or -1 when no response headers arrived.
func (r *Result) TTFB() time.Duration {
	if r.FirstByte.IsZero() {
		return -1
	}
	return r.FirstByte.Sub(r.Start)
}

func (r *Result) fail(err error) {
	if r.Err == nil {
		r.Err = err
		r.Class = Classify(err)
	}
}
