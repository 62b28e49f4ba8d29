// Package proxy is mcpbench's fault-injecting reverse proxy for MCP's
// Streamable HTTP transport (MCP 2025-11-25, Transports §2): it sits
// between any MCP client and any server, forwards POSTs (JSON and SSE
// answers), standalone GET streams, resumes (GET with Last-Event-ID) and
// DELETEs, and plants seeded faults at SSE event boundaries — drop,
// duplicate, swap or inject an event, hold progress past the response,
// drop the response, cut (FIN or RST) after N events, inside an event or
// before the first id, stall, delay, keep a stream open, rewrite retry
// hints, replay a resume wrongly or answer it with silence, answer
// 404/429/503, close every GET stream at once.
//
// The wire picture:
//
//	client ──POST/GET/DELETE──▶ Proxy (ServeHTTP) ──▶ httputil.ReverseProxy ──▶ upstream
//	client ◀─ events, flushed one by one ─ pipe (sse.Decoder → faults → encoder) ◀─ SSE answer
//
// Each request is a stream numbered from 1; its faults are drawn from a
// PCG seeded with (Config.Seed, stream number). An SSE answer is decoded
// one event at a time (internal/sse), its message classified (progress,
// response, request, notification; internal/jsonrpc), and re-encoded with
// its id, retry and event fields; comments (keep-alives) are not
// forwarded. Memory per stream is the decoder's small buffers plus the
// events a hold-progress or swap fault keeps back.
//
// The ground truth is a JSON-lines log (Line): every request, every event
// forwarded, every planted fault ("fault": kind) and every stream's end.
// Verdicts judges the client from what it sent.
//
// Host and Origin pass through unchanged. Concurrency: a Proxy is safe for
// concurrent use; its log is written under a mutex.
package proxy
