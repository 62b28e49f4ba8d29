// Package jsonrpc is the JSON-RPC 2.0 layer of the hot path (JSON-RPC 2.0
// §4–§5; MCP 2025-11-25, Base Protocol "Messages"): a validating scanner
// that classifies one message in a single pass over its bytes (Parse,
// Message, Kind; Field and FieldNumber for a member of a raw object), the
// append renderers of requests, notifications and responses
// (AppendRequest, AppendNotification, AppendResponse, AppendErrorResponse,
// AppendString), and the error object (Error, ParseError).
//
// It knows nothing of MCP sessions or HTTP. Scanning allocates nothing
// unless a method name needs unescaping; the slices of a Message alias its
// input. Every function is safe for concurrent use.
package jsonrpc
