package driver

import "time"

// JSONBufferCap exposes the capacity of the JSON buffer a session keeps
// between messages (tests check that large answers do not pin it).
func JSONBufferCap(s *Session) int { return cap(s.jbuf) }

// GETIdle reports whether the session's GET stream waits idle, its
// goroutine parked in getStream.idle.
func (s *Lane) GETIdle() bool {
	g := s.get.Load()
	return g != nil && g.idling.Load()
}

// SetCancelDrainedHook sets the hook called when a cancelled op's reader
// drained its stream after the cancel's acknowledgement (nil: none).
func SetCancelDrainedHook(h func()) { testHookCancelDrained = h }

// SetCancelGrace sets how long a cancelled op reads on after the
// acknowledgement (CancelGrace by default); tests that must read every
// message a server plants set it long (its stream then ends first).
func SetCancelGrace(d time.Duration) { cancelGrace = d }
