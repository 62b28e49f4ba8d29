package workload

import (
	"encoding/json"
	"fmt"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/results"
)

// onResourceUpdate records a session's subscription event when it
// belongs to the measured window: by the change's send (an unmatched
// notification by its arrival).
func (e *engine) onResourceUpdate(u driver.ResourceUpdate) {
	t := u.Changed
	if u.Kind == driver.UpdateUnmatched {
		t = u.At
	}
	if e.counted(t) {
		e.rec.RecordUpdate(u)
	} else {
		e.rec.RecordUpdateOutside(u)
	}
}

// modernLogLevel carries the level of the mix's logging/setLevel op,
// which 2026-07-28 does not have, into every request's _meta
// (io.modelcontextprotocol/logLevel, SEP-2575), and says so.
func (e *engine) modernLogLevel() {
	for _, op := range e.pl.Ops {
		if op.Method != "logging/setLevel" {
			continue
		}
		var lv string
		json.Unmarshal(jsonrpc.Field(op.Params, "level"), &lv)
		e.pl.Driver.LogLevel = lv
		e.notes = append(e.notes, fmt.Sprintf("log level %q sent in every request's _meta (%s) instead of logging/setLevel", lv, driver.MetaLogLevel))
		return
	}
}

// subscriptionSummary is the run's resource subscriptions (nil when none).
func (e *engine) subscriptionSummary() *results.SubscriptionSummary { return e.rec.Subscriptions() }
