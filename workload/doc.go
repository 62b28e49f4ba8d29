// Package workload compiles a profile (package profile) into a plan and
// runs it: Compile (pure: it never writes the profile nor builds an HTTP
// client) builds the plan (driver config, op mix, scenarios, checks,
// thresholds, the schedule: constant, and k6-style stages in both
// models); Run is the engine: set-up, admission without blocking, the VUs
// (each owning one session), churn, the collector that feeds the sinks,
// and the summary. The plan is read-only under Run.
//
// Files: plan.go and compile_*.go (Compile), schedule.go, segment.go
// (execution segments), engine.go (Run), vu.go, sessions.go, collect.go,
// summary.go, correlate.go (the values scenario steps read). The engine
// reads the Plan only, never the Profile (TestEngineReadsNoProfile). It
// must not parse SSE or touch sockets (the driver does), nor judge beyond
// asking verdict for thresholds and storms at a run's end.
package workload
