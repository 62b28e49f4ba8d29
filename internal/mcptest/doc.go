// Package mcptest is a scriptable fake MCP server for tests: handlers are
// keyed by (HTTP method, session, JSON-RPC method, Last-Event-ID), every
// request is recorded, and helpers write JSON answers, SSE events, cuts
// (abrupt connection close) and orderly stream ends. It also provides an
// in-memory network (Pipe) so tests can run client and server inside a
// testing/synctest bubble, where time is fake and waits are exact.
//
// # Owns and must not
//
// It owns the test fakes of mcpbench: the scriptable [Server] and the
// in-memory [Pipe] (mcptest.go), the [ProbeFake] that plants the
// transport faults of real servers for the probe's tests
// (probe_fakes.go), and the hostile servers of [ServeHostile]
// (hostile.go) that misbehave as servers in the field do.
//
// It is for tests only: no production code imports it, except the
// scripts/hostile command, which serves a hostile case so mcpbench can be
// measured against it. It must not be imported by the driver, workload,
// chaos, metrics, plots, refserver or cmd packages outside their tests.
// Its servers are for loopback: tests listen on 127.0.0.1:0.
package mcptest
