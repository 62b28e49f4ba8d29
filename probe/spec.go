package probe

// Sentences the checks cite: 2025-11-25 basic/transports unless named.
const (
	specOrigin        = `2025-11-25 transports §Security Warning: "If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."`
	specSessionChars  = `2025-11-25 transports §Session Management: "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)."`
	specSessionGone   = `2025-11-25 transports §Session Management: "The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found."`
	specNoSession     = `2025-11-25 transports §Session Management: "Servers that require a session ID SHOULD respond to requests without an MCP-Session-Id header (other than initialization) with HTTP 400 Bad Request."`
	specDelete        = `2025-11-25 transports §Session Management: clients "SHOULD send an HTTP DELETE … to explicitly terminate the session"; "The server MAY respond to this request with HTTP 405 Method Not Allowed"`
	specVersion       = `2025-11-25 transports §Protocol Version Header: "If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request."`
	specNotification  = `2025-11-25 transports §Sending Messages: "If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body."`
	specBadInput      = `2025-11-25 transports §Sending Messages: "If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request)."`
	specAccept        = `2025-11-25 transports §Sending Messages: "The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types."`
	specContentType   = `2025-11-25 transports §Sending Messages: "The body of the POST request MUST be a single JSON-RPC request, notification, or response."; RFC 9110 §15.5.16: 415 Unsupported Media Type`
	specMethods       = `2025-11-25 transports §Streamable HTTP: "The server MUST provide a single HTTP endpoint path … that supports both POST and GET methods"; RFC 9110 §15.5.6: other methods get 405 with Allow`
	specTerminate     = `2025-11-25 transports §Sending Messages: "After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream."`
	specRetry         = `2025-11-25 transports §Sending Messages: "If the server does close the connection prior to terminating the SSE stream, it SHOULD send an SSE event with a standard retry field before closing the connection."`
	specResume        = `2025-11-25 transports §Resumability and Redelivery: "The server MAY use this header to replay messages that would have been sent after the last event ID, on the stream that was disconnected"`
	specPoll          = `2025-11-25 transports §Sending Messages: "the server MAY close the connection (without terminating the SSE stream) … The client SHOULD then \"poll\" the SSE stream by attempting to reconnect."`
	specGET           = `2025-11-25 transports §Listening for Messages from the Server: "The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed"`
	specSecondGET     = `2025-11-25 transports §Multiple Connections: "The server MUST send each of its JSON-RPC messages on only one of the connected streams"`
	specUnknownLastID = `2025-11-25 transports §Resumability and Redelivery: "The server MUST NOT replay messages that would have been delivered on a different stream."`
	spec401           = `RFC 9110 §15.5.2: "The server generating a 401 response MUST send a WWW-Authenticate header field"; 2025-11-25 authorization: its resource_metadata parameter locates the Protected Resource Metadata (RFC 9728)`
	specMismatch      = `2026-07-28 Streamable HTTP §Server Validation: "Servers MUST reject requests with a 400 Bad Request HTTP status and JSON-RPC error code -32020 (HeaderMismatch) if any validation fails."`
	specMissingHeader = `2026-07-28 Streamable HTTP §Server Validation: failures include "A required standard header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) is missing."`
	specUnknownMethod = `2026-07-28 Streamable HTTP: "If the server does not implement the requested RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601"`
	specFuture        = `2026-07-28 Streamable HTTP: "If the server does not implement the requested protocol version … it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError"`
	specListen        = `2026-07-28 Subscriptions: "Unlike one-off requests, the stream stays open and delivers notifications until the client cancels it."; "The server MUST send notifications/subscriptions/acknowledged as the first message"`
	specModernGET     = `2026-07-28 Streamable HTTP §Earlier Streamable HTTP Revisions: "HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed."`
)
