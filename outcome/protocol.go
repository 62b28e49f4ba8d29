package outcome

// Protocol20260728 is the first modern (stateless, per-request _meta)
// protocol version (driver.Protocol20260728 is this constant).
const Protocol20260728 = "2026-07-28"

// IsModern reports whether a protocol version is a modern (stateless,
// per-request _meta) one.
func IsModern(p string) bool { return p >= Protocol20260728 }
