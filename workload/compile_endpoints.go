package workload

import (
	"fmt"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
)

// compileEndpoints readies the plan's endpoints after the first (whose
// URL and headers are Driver's): the shown URLs for the summary, and the
// resolved ones for the engine's per-endpoint driver configs.
func (pl *Plan) compileEndpoints(first *profile.Endpoint, more []*profile.Endpoint) {
	if len(more) == 0 {
		return
	}
	pl.endpoints = append([]*profile.Endpoint{first}, more...)
	for _, ep := range pl.endpoints {
		pl.EndpointsShown = append(pl.EndpointsShown, ep.Shown)
	}
	pl.Target = fmt.Sprintf("%s (+%d more endpoints)", first.Shown, len(more))
}

// endpointConfigs returns one driver config per endpoint (nil with one
// endpoint): the plan's, with the endpoint's URL and headers. Called once
// the protocol is settled (decideProtocol changes Driver).
func (pl *Plan) endpointConfigs() []driver.Config {
	if len(pl.endpoints) < 2 {
		return nil
	}
	out := make([]driver.Config, len(pl.endpoints))
	for i, ep := range pl.endpoints {
		out[i] = pl.Driver
		out[i].URL, out[i].Header = ep.URL, ep.Header
	}
	return out
}
