package driver

// JSONBufferCap exposes the capacity of the JSON buffer a session keeps
// between messages (tests check that large answers do not pin it).
func JSONBufferCap(s *Session) int { return cap(s.jbuf) }
