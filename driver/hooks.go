package driver

import (
	"context"
	"time"
)

// laneMore is a lane's state for the rest of MCP.
type laneMore struct {
	cx                          canceller // the cancel of the op in flight (Op.Cancel)
	cursor, prevCursor, pageBuf []byte    // pagination of a list op
}

// Do's first and last steps for the rest of MCP: arming an attempt's
// cancel and noting the change it makes before it is sent; after the op,
// its cancel, mailbox, timer and context end, and its effect on the
// session's subscriptions is settled. Ops without Cancel, Changes or a
// subscription pay two field checks.

// endDo ends Do: the op's cancel, mailbox, timer and context, its End,
// and what it did to the session's subscriptions.
func (s *Session) endDo(op *Op, res *Result, cancel context.CancelCauseFunc, changed *time.Time) {
	if op.Cancel != nil {
		s.endCancel(op, res)
	}
	s.cur.Store(nil)
	s.endOp(cancel)
	s.opCtx = nil
	if res.End.IsZero() {
		res.End = time.Now()
	}
	if op.Changes != "" || op.subURI != "" {
		s.settleOp(op, res, *changed)
	}
}

// beforeSend arms the cancel of an attempt (Op.Cancel) and notes the
// change it makes (Op.Changes) at its first send; it returns the pending
// change's time.
func (s *Session) beforeSend(ctx context.Context, op *Op, c *call, first bool, attempt, changed time.Time) time.Time {
	if op.Cancel != nil {
		s.armCancel(ctx, op, c, first, attempt)
	}
	if op.Changes != "" && changed.IsZero() {
		changed = s.noteChange(op, attempt)
	}
	return changed
}
