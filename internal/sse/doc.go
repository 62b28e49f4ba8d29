// Package sse decodes Server-Sent Events streams (WHATWG HTML, "Server-sent
// events", §9.2.6 event stream interpretation) for the Streamable HTTP
// transport: a POST's SSE answer, the standalone GET stream and their
// resumed connections (MCP 2025-11-25, Transports §2.2–§2.5).
//
// It knows nothing of MCP or JSON-RPC: an Event is an id, a type, data and
// a retry hint; the caller interprets the data.
//
// # Buffer lifetime
//
// Decoding is zero-copy where it can be, the way x/net/http2's Framer hands
// out frames: the byte slices of an Event returned by Decoder.Next (ID,
// Type, Data) alias the decoder's buffers and are valid only until the next
// call to Next, Reset or Start on that decoder. A caller that keeps any of
// them longer must copy it. LastEventID's slice follows the same rule.
//
// # Memory
//
// Between events a decoder holds small buffers (its read buffer comes from a
// process-wide pool while it has a stream; NewStreamDecoder's is its own).
// One event is bounded by Decoder.MaxEvent (default MaxEventBytes); a larger
// one fails Next with ErrEventTooLarge, and the Reserve/Release hooks let a
// process-wide budget refuse the growth a large event needs.
//
// # Concurrency
//
// A Decoder is used by one goroutine at a time; distinct decoders are
// independent.
package sse
