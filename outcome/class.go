package outcome

import "strconv"

// Class is the error class of an operation: a small enum so that errors are
// aggregated by class, never by free-text message.
type Class uint8

const (
	ClassOK             Class = iota // no error
	ClassTransport                   // connect refused/reset, EOF before headers, TLS
	ClassTimeout                     // connect, request or stream-idle timeout
	ClassHTTPStatus                  // unexpected HTTP status (4xx/5xx other than a session 404)
	ClassSessionMissing              // 404 on a session that re-initializing did not fix
	ClassBadResponse                 // wrong content type, not JSON-RPC, no response in the answer
	ClassSSEMalformed                // an event stream the decoder cannot accept
	ClassJSONRPC                     // a JSON-RPC error response
	ClassToolError                   // tools/call result with isError: true
	ClassStreamBroken                // a stream broke and could not be resumed
	ClassUnresumable                 // a stream broke before any event id
	ClassCanceled                    // the run ended (or Ctrl-C) while the operation ran
	ClassHeaderMismatch              // 2026-07-28: -32020, headers do not match the body
	ClassVersion                     // unsupported protocol version (-32022, or a version the driver does not speak)
	ClassMissingValue                // not sent: a value it reads from an earlier step is missing (correlate.go)
	ClassResumeLimit                 // a stream given up: the server made it reconnect past the bounds (ErrResumeLimit)
	ClassLinkMissing                 // 404 at a stream's rel="stream" URL (ErrStreamLinkMissing)
	NumClasses                       // number of classes
)

var classNames = [...]string{
	ClassOK:             "ok",
	ClassTransport:      "transport",
	ClassTimeout:        "timeout",
	ClassHTTPStatus:     "http-status",
	ClassSessionMissing: "session-missing",
	ClassBadResponse:    "bad-response",
	ClassSSEMalformed:   "sse-malformed",
	ClassJSONRPC:        "jsonrpc-error",
	ClassToolError:      "tool-error",
	ClassStreamBroken:   "stream-broken",
	ClassUnresumable:    "unresumable",
	ClassCanceled:       "canceled",
	ClassHeaderMismatch: "header-mismatch",
	ClassVersion:        "unsupported-version",
	ClassMissingValue:   "missing-value",
	ClassResumeLimit:    "resume-limit",
	ClassLinkMissing:    "link-missing",
}

// String returns the class name used in reports ("ok", "transport", ...).
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class-" + strconv.Itoa(int(c))
}
