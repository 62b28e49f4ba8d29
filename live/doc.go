// Package live streams a run's results while it goes, for the tools a
// user already watches: a Prometheus endpoint (Prometheus, served by
// Server), Prometheus remote write (RemoteWrite), a JSON-lines stream
// (JSONL) and a web page (Dashboard). All are metrics.Sinks fed the same
// interval records as the results directory; none pushes back on the
// load: Prometheus updates counters under a short lock and a scrape only
// copies them, RemoteWrite queues snapshots for its sender (bounded,
// oldest dropped), JSONL hands each line to a writer goroutine through a
// bounded queue and counts the lines it had to drop, Dashboard hands each
// event to each viewer's bounded queue.
//
// # Prometheus metrics
//
// Names follow the Prometheus conventions (base units: seconds and bytes;
// counters end in _total) and echo k6's Prometheus output (k6_vus,
// k6_iterations_total, k6_http_req_duration_seconds). Ops are counted by
// intended start, as intervals.csv counts them, so the totals at the end
// equal the summary's: rate(mcpbench_ops_total[1m]) is the run's op rate.
//
//	mcpbench_ops_total{op}                       counter   completed ops (errors included), measured window
//	mcpbench_op_errors_total{op,class}           counter   failed ops by error class (transport, timeout, http-status, …)
//	mcpbench_ops_dropped_total{op}               counter   open model: arrivals no VU could start in time
//	mcpbench_op_duration_seconds{op}             histogram response time from the intended start (classic and native buckets)
//	mcpbench_op_service_duration_seconds{op}     histogram service time from the actual send
//	mcpbench_ops_in_flight                       gauge     mean ops in flight over the last interval (Little's law: completions × mean service time)
//	mcpbench_target_arrival_rate                 gauge     open model: the arrival rate asked for (ops/s)
//	mcpbench_vus, mcpbench_sessions, mcpbench_get_streams  gauges
//	mcpbench_resumes_total{op}                   counter   resume attempts of broken response streams
//	mcpbench_reconnects_total                    counter   reconnect attempts, response and GET streams
//	mcpbench_ledger_streams_total{op}            counter   streams the replay ledger judged (op="GET": GET streams, at session close)
//	mcpbench_ledger_faulty_streams_total{op}     counter   streams with at least one verdict
//	mcpbench_ledger_verdicts_total{op,verdict}   counter   lost, duplicated, reordered, cross-stream, …
//	mcpbench_generator_cpu_cores                 gauge     mcpbench's own CPU over the last interval
//	mcpbench_generator_resident_memory_bytes     gauge
//	mcpbench_target_cpu_cores, mcpbench_target_resident_memory_bytes, mcpbench_target_open_fds, mcpbench_target_threads
//	                                             gauges    the --target-pid process
//	mcpbench_run_phase{phase}                    gauge     1 for the phase the run is in (warm-up, measure, stopping, done)
//	mcpbench_run_info{profile,target,protocol}  gauge 1
//
// plus the Go and process collectors (go_*, process_*) of client_golang.
// Response and GET stream verdicts of the replay ledger are judged when a
// stream ends; GET streams end with their session, so with no churn their
// verdicts appear at the run's end.
//
// # Remote write
//
// RemoteWrite pushes the series above (go_* and process_* aside) to a
// Prometheus remote-write receiver, protocol 1.0: a snappy-compressed
// protobuf WriteRequest per snapshot, encoded with protowire (the message
// is four fields deep; prometheus/prometheus is not worth its build), the
// config's labels (job, instance) on every series, histograms classic
// (_bucket{le}, _sum, _count). Snapshots queue for a sender goroutine
// (bounded, oldest dropped and counted) that retries network errors, 5xx
// and 429 with exponential backoff.
//
// # JSON lines
//
// One object per line: {"type":"start",…} when the measured clock starts,
// {"type":"interval",…} per interval (the columns of intervals.csv, with
// the ops by name) and {"type":"end",…} with the summary's headline.
//
// # Dashboard
//
// Dashboard (--dashboard) serves a web page of the run at / (its files in
// dashboard/, with uPlot: nothing loads from the network) and its
// Server-Sent Events at /events: start, interval (the JSON line's fields
// plus service time percentiles and the ledger's verdicts), end, step (a
// sweep's), report (the HTML report plots renders, at /report, once
// Finish is called) and bye. Each event is encoded once and handed to
// every viewer's bounded queue, the oldest dropped when a viewer falls
// behind; a late viewer first gets the history it missed.
//
// # Owns and must not
//
// It owns the live outputs: their formats, names and the HTTP endpoint.
// It must not compute statistics the metrics package owns (percentiles
// come from the interval histograms), judge, or block the engine.
package live
