package metrics

import (
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// IsLateStart reports whether res is a late start (see results.LateStartFraction):
// sent more than results.LateStartFloor and more than results.LateStartFraction of its
// response time after its intended start.
func IsLateStart(res *driver.Result) bool {
	if res.Intended.IsZero() {
		return false
	}
	lag := res.Start.Sub(res.Intended)
	return lag > results.LateStartFloor && float64(lag) > results.LateStartFraction*float64(res.ResponseTime())
}
