// Package outcome is the vocabulary of what an operation did, shared by
// the driver that finds it and the packages that store, judge and print
// it: the error Class (and NumClasses), the replay Verdict (and
// NumVerdicts, StreamVerdicts, SessionVerdicts), a stream's Resume
// attempts, the reconnect waits capped (RetryCap), the notifications
// counted, and the client's connection stats (NetStats). It imports
// nothing of the module, so a reader of results compiles no HTTP client
// or MCP session. driver and httpclient re-export these names as aliases.
// The values are plain data: not safe for concurrent mutation.
package outcome
