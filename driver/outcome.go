package driver

import "github.com/mcpbench/mcpbench/outcome"

// The outcome vocabulary lives in package outcome (a leaf that readers of
// results import without compiling the driver); driver re-exports it, so
// driver.Class and outcome.Class are one type.

// Class is the error class of an operation: a small enum so that errors
// are aggregated by class, never by free-text message (outcome.Class).
type Class = outcome.Class

// Error classes (see outcome.Class).
const (
	ClassOK             = outcome.ClassOK
	ClassTransport      = outcome.ClassTransport
	ClassTimeout        = outcome.ClassTimeout
	ClassHTTPStatus     = outcome.ClassHTTPStatus
	ClassSessionMissing = outcome.ClassSessionMissing
	ClassBadResponse    = outcome.ClassBadResponse
	ClassSSEMalformed   = outcome.ClassSSEMalformed
	ClassJSONRPC        = outcome.ClassJSONRPC
	ClassToolError      = outcome.ClassToolError
	ClassStreamBroken   = outcome.ClassStreamBroken
	ClassUnresumable    = outcome.ClassUnresumable
	ClassCanceled       = outcome.ClassCanceled
	ClassHeaderMismatch = outcome.ClassHeaderMismatch
	ClassVersion        = outcome.ClassVersion
	ClassMissingValue   = outcome.ClassMissingValue
	ClassResumeLimit    = outcome.ClassResumeLimit
	ClassLinkMissing    = outcome.ClassLinkMissing
	NumClasses          = outcome.NumClasses
)

// Verdict is one kind of replay-correctness fault (outcome.Verdict).
type Verdict = outcome.Verdict

// Verdicts (see outcome.Verdict).
const (
	VerdictLost                   = outcome.VerdictLost
	VerdictDuplicated             = outcome.VerdictDuplicated
	VerdictReordered              = outcome.VerdictReordered
	VerdictCrossStream            = outcome.VerdictCrossStream
	VerdictMisrouted              = outcome.VerdictMisrouted
	VerdictLate                   = outcome.VerdictLate
	VerdictUnterminated           = outcome.VerdictUnterminated
	VerdictUnresumable            = outcome.VerdictUnresumable
	VerdictSilentResume           = outcome.VerdictSilentResume
	VerdictDeletedSessionAccepted = outcome.VerdictDeletedSessionAccepted
	VerdictWrongMissingStatus     = outcome.VerdictWrongMissingStatus
	VerdictAfterCancel            = outcome.VerdictAfterCancel
	NumVerdicts                   = outcome.NumVerdicts
)

// StreamVerdicts are the verdicts a stream's ledger can give (the others
// judge sessions: see SessionVerdicts).
var StreamVerdicts = outcome.StreamVerdicts

// SessionVerdicts are the verdicts of the deleted-session check.
var SessionVerdicts = outcome.SessionVerdicts

// VerdictMap returns the non-zero counts of c by verdict name
// ("lost": 2, …); empty when c has none.
func VerdictMap(c [NumVerdicts]int) map[string]int { return outcome.VerdictMap(c) }

// Verdicts returns every verdict in report order.
func Verdicts() []Verdict { return outcome.Verdicts() }

// Resume records one resume attempt of a broken stream (outcome.Resume).
type Resume = outcome.Resume

// RetryCap counts reconnect waits whose retry hint was over
// Config.MaxRetryWait and were cut to it (outcome.RetryCap).
type RetryCap = outcome.RetryCap

// Notifications counts notifications of interest that a stream carried
// (outcome.Notifications).
type Notifications = outcome.Notifications
