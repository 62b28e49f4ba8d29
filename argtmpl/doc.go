// Package argtmpl is argument templating: the {{...}} in an op's
// arguments (and its tool, prompt or uri) compiled once into a renderer
// that writes each request's params — random values, counters, the VU and
// iteration, a data file's row ({{.column}}, CSV or JSONL), -e values
// ({{env}}) and earlier scenario steps' values ({{step}}). See args.go for
// the language, data.go for data files, refs.go for {{step}}. An Op is
// safe for concurrent rendering; it needs only package driver's request
// context. The engine's side (which VU's values a step reads) is
// package workload's.
package argtmpl
