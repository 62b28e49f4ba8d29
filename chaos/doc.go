// Package chaos injects faults into the streams a load run reads: cuts
// (after N events, after N bytes, in the middle of an event, before the
// first event, at a random time), closed with FIN or RST; stalls of the
// reader; delayed requests; and storms that cut every open stream at once.
//
// A fault plan is data (a profile's chaos: section, or --chaos/--storm
// flags) and is seeded: each VU draws its faults from its own generator
// seeded by (seed, VU, stream kind), so the k-th POST stream and the k-th
// GET stream of a VU meet the same fault in every run with that seed,
// however goroutines interleave (Schedule computes it without running).
//
// Faults are injected by wrapping the VU's http.RoundTripper: the driver's
// code path is the same with and without chaos. The package knows SSE
// event framing (to count events) and nothing else of MCP.
//
// # Owns and must not
//
// It owns fault plans (plan.go: parsing, defaults, validation), the
// seeded fault schedule and its counts (inject.go), the client-side
// transport wrapper (transport.go), the response-body wrapper that counts
// SSE events and cuts or stalls a stream (body.go), and storm waves
// (storm.go).
//
// It must not know MCP beyond SSE event framing (and the request kinds it
// targets: POST, GET, set-up), must not import the driver, the workload
// engine or metrics, and must stay off the hot path when chaos is off:
// [Injector.Wrap] with an empty plan returns the transport unchanged.
package chaos
