package launch

import (
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// The defaults of the limits a command shows in its help (the profile's
// zero means them).
const (
	DefaultMaxMessageBytes = driver.DefaultMaxMessageBytes // largest JSON answer read
	DefaultMaxEventBytes   = sse.MaxEventBytes             // largest SSE event read
)

// AutoMemoryLimit sets a soft memory limit when GOMEMLIMIT is not set
// (driver.AutoMemoryLimit: 2 × the large-message budget); a command calls
// it first.
func AutoMemoryLimit() { driver.AutoMemoryLimit() }

// ParseHeader reads a header flag's 'Name: value' (driver.ParseHeader).
func ParseHeader(h string) (name, value string, err error) { return driver.ParseHeader(h) }
