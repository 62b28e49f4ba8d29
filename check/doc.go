// Package check judges what a server answered, not only that it answered:
// checks on an op's result member, k6's check() for MCP.
//
// A check is written
//
//	PATH OP VALUE
//
// PATH is a gjson path (github.com/tidwall/gjson: content.0.text,
// structuredContent.items.#, content.#(type=="text").text) on the
// result member of the answer (the JSON-RPC result object), with two
// aliases: structured.X for structuredContent.X, and is_error for isError
// (false when the result has none). OP is one of == != < <= > >= ~: ==
// and != compare with a JSON literal VALUE ("hello", 3, true, null) by
// type and value; < <= > >= compare numbers; ~ matches a regular
// expression (Go RE2 syntax, written as a JSON string: "^slept") against a
// string value (any other value's JSON text). A path that selects nothing
// fails the check (is_error aside), whatever OP: a check reads a value
// the answer must have.
//
// The check output_schema (alone, no OP) validates the result's
// structuredContent against the outputSchema the tool declares in
// tools/list (JSON Schema 2020-12, github.com/google/jsonschema-go); a
// tool without outputSchema, or a result without structuredContent,
// fails it, with a message saying which. Schemas are fetched once per
// session (Schemas.Fetch) and kept compiled.
//
// Compile once, run per result: Parse compiles an expression (regular
// expression included); a Set is an op's checks and its Inspect is the
// op's driver.Op.Inspect. Evaluation reads the result in place: checks
// that pass allocate nothing (output_schema aside: validation decodes the
// structuredContent); a failure records the value it saw, shortened
// (driver.CheckOutcome).
package check
