// Package probe is the conformance probe behind `mcpbench probe`: a few
// requests (about 20 to 50, never load) that learn what an MCP server
// speaks over Streamable HTTP — the eras and versions, sessions, JSON or
// SSE answers, event ids, priming, retry hints, resumability — and check
// it against the sentences of the transport's spec (2025-11-25 transports,
// 2026-07-28 Streamable HTTP), each check citing the sentence it checks.
//
// Run probes one endpoint and returns a Report; WriteText and WriteJSON
// render it as the command prints it. Run sends raw HTTP requests of its
// own (some deliberately malformed) through the transport of the
// driver.Config it is given (driver.NewHTTPClient when the config has no
// client), reads SSE with internal/sse and JSON-RPC with internal/jsonrpc,
// and takes the parts of the wire format it does not test from package
// driver (driver.Config.ModernMeta, driver.NameHeader,
// driver.DiscoverVersions, driver.StreamLink, the header names and
// protocol versions), so that it speaks as a driver.Session does. It opens
// no driver.Session.
//
// The package imports driver (for its wire helpers and Config) and the
// internal codecs; it must not import the engine, workload, metrics,
// report or cmd packages, and driver must not import it.
//
// # Files
//
//   - probe.go: Run, Report and its parts, the probe's limits, the
//     prober's state and the era it speaks.
//   - exchange.go: the raw requests (headers of each era, the request
//     builder) and how answers are read, recorded and judged (check, na).
//   - legacy.go: initialize, session, GET and DELETE checks (2025-*).
//   - modern.go: server/discover and the 2026-07-28 checks.
//   - transport.go: era-independent POST checks (malformed JSON, Accept,
//     Content-Type, Origin, PUT) and the 401 challenge.
//   - conform.go: Options (the tools the probe calls), the Host and
//     same-origin checks, ping, and the concurrent calls' cross-talk check.
//   - stream.go: the streaming tool call.
//   - resume.go: SSE polling and Last-Event-ID replay checks.
//   - links.go: the rel="stream" link row (SEP-1335).
//   - spec.go: the spec sentences the checks cite.
//   - text.go: the report as text and as JSON.
package probe
