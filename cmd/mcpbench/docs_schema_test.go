package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
	"go.yaml.in/yaml/v3"
)

// docs/reference/summary-json.md is summary.json's schema: every object
// the file holds, each field with its JSON name, its type and the doc
// comment of the Go field it comes from, generated from the summary's
// types (reflection for the shape, the package's source for the
// comments). The test regenerates the page and fails when the committed
// one differs, so a field added, renamed or documented anew without the
// page fails CI. To rewrite it:
//
//	go test ./cmd/mcpbench -run TestDocsSummarySchema -update
//	MCPBENCH_UPDATE_DOCS=1 go test ./cmd/mcpbench -run TestDocsSummarySchema -count=1

const summarySchemaDoc = "../../docs/reference/summary-json.md"

const summarySchemaHead = `# summary.json

` + "`summary.json`" + ` in a results directory is exactly the summary the run printed, as JSON (` + "`--format json`" + `
prints the same object). This page is generated from the Go types it is written from — a test fails when it is
stale (` + "`go test ./cmd/mcpbench -run TestDocsSummarySchema`; `-update` rewrites it" + `) — so each field's
meaning is its Go doc comment. The other files of a results directory: [results.md](results.md); the metric names
thresholds read from these numbers: [metrics.md](metrics.md).

Types: ` + "`string`, `number`, `bool`; `time` is an RFC 3339 string; `[]T` an array of T; `{string: T}` an object\n" +
	"whose values are T; a field marked *omitempty* is left out when it is zero, empty or null." + `

`

// schema describes how a Go type is written as a document: the struct
// tag that names its fields ("json", "yaml"), the heading of the root
// object, and the notes for fields without a doc comment.
type schema struct {
	tag, rootHeading string
	notes            map[string]string
	custom           func(t reflect.Type) (string, []reflect.Type, bool) // a type with its own encoding, said in words (and the sections it refers to)
}

// genSchema renders the page of root: a section per struct type it
// reaches, a row per field (its name, its type, its meaning: the field's
// doc comment), and returns the fields it visited ("Type.Field").
func (sc schema) gen(t *testing.T, head string, root reflect.Type) (string, map[string]bool) {
	t.Helper()
	comments := fieldComments{}
	visited := map[string]bool{}
	var b strings.Builder
	b.WriteString(head)
	queue := []reflect.Type{root}
	seen := map[reflect.Type]bool{root: true}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if st == root {
			b.WriteString(sc.rootHeading + "\n\n")
		} else {
			fmt.Fprintf(&b, "## %s\n\n", st.Name())
		}
		if doc := strings.Join(strings.Fields(comments.of(t, st, "")), " "); doc != "" && st != root {
			b.WriteString(doc + "\n\n")
		}
		b.WriteString("| field | type | meaning |\n|---|---|---|\n")
		var row func(st reflect.Type)
		row = func(st reflect.Type) {
			for i := range st.NumField() {
				f := st.Field(i)
				if !f.IsExported() {
					continue
				}
				name, opts, _ := strings.Cut(f.Tag.Get(sc.tag), ",")
				if name == "-" {
					continue
				}
				visited[st.Name()+"."+f.Name] = true
				if (f.Anonymous && name == "" || strings.Contains(opts, "inline")) && derefStruct(f.Type) != nil {
					row(derefStruct(f.Type)) // an embedded struct's fields are the object's own
					continue
				}
				if name == "" {
					name = f.Name
					if sc.tag == "yaml" {
						name = strings.ToLower(f.Name) // yaml.v3's default key
					}
				}
				typ, refs := sc.typeOf(f.Type)
				for _, r := range refs {
					if !seen[r] {
						seen[r] = true
						queue = append(queue, r)
					}
				}
				if strings.Contains(opts, "omitempty") {
					typ += " *omitempty*"
				}
				visited[st.Name()+"."+name] = true // notes may name a field by its Go name or as the document spells it
				text := comments.of(t, st, f.Name)
				if strings.TrimSpace(text) == "" {
					text = sc.notes[st.Name()+"."+f.Name] + sc.notes[st.Name()+"."+name]
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, typ, mdCell(text))
			}
		}
		row(st)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n", visited
}

// genSummarySchema renders the schema page of results.Summary.
func genSummarySchema(t *testing.T) (string, map[string]bool) {
	sc := schema{tag: "json", rootHeading: "## The top-level object (`Summary`)", notes: schemaNotes, custom: func(t reflect.Type) (string, []reflect.Type, bool) {
		if t.Kind() != reflect.Pointer && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)) {
			return "`" + t.Name() + "` (its own JSON)", nil, true
		}
		return "", nil, false
	}}
	return sc.gen(t, summarySchemaHead, reflect.TypeOf(results.Summary{}))
}

var (
	timeType      = reflect.TypeOf(time.Time{})
	durationType  = reflect.TypeOf(time.Duration(0))
	marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// derefStruct is t (or what t points to) when it is a struct, else nil.
func derefStruct(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// typeOf says how a value of t is written, with the struct types it
// refers to (each a section of the page, linked).
func (sc schema) typeOf(t reflect.Type) (string, []reflect.Type) {
	switch {
	case t == timeType:
		return "time", nil
	case t == durationType:
		return "number (ns)", nil
	}
	if s, refs, ok := sc.custom(t); ok {
		return s, refs
	}
	switch t.Kind() {
	case reflect.Pointer:
		return sc.typeOf(t.Elem())
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string (base64)", nil
		}
		s, refs := sc.typeOf(t.Elem())
		return "[]" + s, refs
	case reflect.Map:
		s, refs := sc.typeOf(t.Elem())
		return "{string: " + s + "}", refs
	case reflect.Struct:
		if t.Name() == "" {
			return "object", nil
		}
		return "[" + t.Name() + "](#" + strings.ToLower(t.Name()) + ")", []reflect.Type{t}
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "bool", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Interface:
		return "any", nil
	}
	return t.Kind().String(), nil
}

// mdCell makes a doc comment one table cell: one line, pipes escaped.
func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// fieldComments reads the doc comments of struct fields from the source
// of the packages the types are declared in (by their import path, in
// this module), package by package on first use.
type fieldComments map[string]map[string]string // package path → "Type.Field" → comment

const modulePath = "github.com/mcpbench/mcpbench"

func (fc fieldComments) of(t *testing.T, st reflect.Type, field string) string {
	pkg := st.PkgPath()
	if _, ok := fc[pkg]; !ok {
		fc[pkg] = parseFieldComments(t, pkg)
	}
	if field == "" {
		return fc[pkg][st.Name()] // the type's own doc comment
	}
	return fc[pkg][st.Name()+"."+field]
}

// schemaNotes say what a field without a doc comment of its own holds
// (the source's comment wins once there is one).
var schemaNotes = map[string]string{
	"Summary.Tool":              "the mcpbench version that wrote the summary",
	"Summary.Target":            "the endpoint (credentials redacted); with several --url, the first",
	"Summary.Embedded":          "true when the target was the embedded reference server",
	"Summary.Protocol":          "the MCP protocol version negotiated",
	"Summary.Profile":           "the profile's name (\"tool NAME\" with --tool)",
	"Summary.Started":           "when the measured window began",
	"Summary.WarmupS":           "the warm-up before the window, seconds (its results discarded)",
	"Summary.MaxVUs":            "the VU cap (--max-vus; the open model's default: rate × max delay)",
	"Summary.Interrupted":       "a signal or an abort ended the window early",
	"Summary.StopReason":        "why the run stopped before its end (an interrupt, --abort-on-fail)",
	"Summary.Ops":               "one row per op of the mix (or scenario step), as the latency table prints them",
	"Summary.All":               "every op together: the table's \"all\" row",
	"Summary.Sessions":          "the MCP sessions: opened, failed, closed, initialize time",
	"Summary.GETStreams":        "the standalone GET streams (with --get-stream or a profile's get_stream)",
	"Summary.Generator":         "what mcpbench itself cost: CPU, memory, start lag",
	"Warning.ID":                "the stable id (W-START-LAG …): its section of docs/troubleshooting.md",
	"Warning.Text":              "what was seen, with its numbers",
	"Warning.Cause":             "why, as the numbers show it",
	"Warning.Remedy":            "what to do about it",
	"OpSummary.Name":            "the op's label (tools/call:echo, agent#2:call …; \"all\" for the total)",
	"OpSummary.Count":           "completed ops of the measured window (errors included)",
	"OpSummary.Rate":            "completed ops per second",
	"OpSummary.Errors":          "failed ops",
	"OpSummary.ErrorsByClass":   "failed ops by error class (transport, timeout, http-status, …)",
	"OpSummary.Dropped":         "open model: arrivals no VU could start within the max delay",
	"OpSummary.Interrupted":     "ops cut short by the end of the run (kept out of latency)",
	"OpSummary.ThrottleWaitS":   "the seconds VUs waited on Retry-After",
	"OpSummary.OfferedRate":     "the offered ops' rate over the window",
	"OpSummary.TTFB":            "time to first byte, ms",
	"OpSummary.BytesIn":         "response bytes read",
	"OpSummary.BytesOut":        "request bytes sent",
	"OpSummary.Events":          "SSE events read on the op's response streams",
	"OpSummary.Progress":        "progress notifications received",
	"OpSummary.Reinits":         "sessions re-initialized after a 404",
	"OpSummary.Reissues":        "requests re-issued (2026-07-28, or --reissue)",
	"OpSummary.Resumes":         "the resumes of broken response streams",
	"OpSummary.Ledger":          "the replay ledger's verdicts on the op's response streams",
	"MCPSummary.TailWaitS":      "the seconds VUs waited on unterminated streams' tails",
	"Latency.P50":               "50th percentile, ms",
	"Latency.P90":               "90th percentile, ms",
	"Latency.P99":               "99th percentile, ms",
	"Latency.P999":              "99.9th percentile, ms",
	"Latency.Max":               "the maximum, ms",
	"Latency.Mean":              "the mean, ms",
	"SessionSummary.Opened":     "sessions initialized",
	"SessionSummary.Failed":     "sessions whose initialize failed",
	"SessionSummary.Closed":     "sessions closed with DELETE",
	"SessionSummary.CloseFails": "DELETEs that failed or were cut",
	"SessionSummary.Initialize": "initialize time, ms",
	"Generator.CPUSeconds":      "CPU seconds mcpbench used (user + system)",
	"Generator.CPUPerOpUS":      "CPU µs per completed op",
	"Generator.Cores":           "mean cores used over the window",
	"Generator.MaxRSSMB":        "the process's peak resident memory, MB",
	"Generator.NumCPU":          "the machine's cores",
	"Generator.IncludesServer":  "the embedded server ran in the same process, so its cost is in these numbers",
	// By the names summary.json gives them:
	"OpSummary.input_rounds":                    "2026-07-28 multi round-trip requests: the input_required results the op answered with another round",
	"ScenarioSummary.name":                      "the scenario's name",
	"EndpointSummary.errors":                    "failed ops on this endpoint",
	"SoakOutcome.verdicts":                      "the soak verdicts",
	"SoakOutcome.judged":                        "how many were judged (not n/a)",
	"SoakOutcome.failed":                        "the names of those that failed",
	"GETStreamSummary.opened":                   "GET streams opened",
	"GETStreamSummary.failed":                   "GET streams that could not be opened",
	"GETStreamSummary.events":                   "SSE events read on them",
	"GETStreamSummary.server_requests_answered": "server-to-client requests that arrived on them and were answered",
	"GETStreamSummary.breaks":                   "GET streams broken (break_causes says why)",
	"GETStreamSummary.ledger":                   "the replay ledger's verdicts on the GET streams, judged when their session closes",
	"Generator.large_message_budget_peak_mb":    "the most of the budget in use at once, MB",
	"Generator.large_message_budget_waits":      "reads that waited for room in the budget",
	"ChaosSummary.cuts_fin":                     "streams cut with a FIN",
	"ChaosSummary.cuts_rst":                     "streams cut with a RST",
	"ChaosSummary.stalls":                       "streams stalled",
	"ChaosSummary.delays":                       "requests delayed",
	"ChaosSummary.storm_cuts":                   "streams a storm cut",
	"Wave.base_error_rate":                      "the error rate before the storm, for comparison",
	"TargetSummary.pid":                         "the --target-pid process",
	"TargetSummary.cpu_s":                       "its CPU seconds over the window",
	"TargetSummary.cpu_us_per_op":               "its CPU µs per completed op",
	"TargetSummary.cores_used":                  "its mean cores used",
	"TargetSummary.rss_start_mb":                "its resident memory at the window's start, MB",
	"TargetSummary.rss_end_mb":                  "at the end, MB",
	"TargetSummary.rss_max_mb":                  "the most, MB",
	"TargetSummary.fds_start":                   "its open files at the start",
	"TargetSummary.fds_end":                     "at the end",
	"TargetSummary.fds_max":                     "the most",
	"TargetSummary.threads_end":                 "its threads at the end",
	"ServerStats.tool_calls":                    "tool calls the embedded server ran",
	"ServerStats.double_executions":             "count-tool keys executed more than once (a request run twice)",
	"ServerStats.count_keys":                    "distinct keys the count tool saw",
	"SubscriptionSummary.latency_ms":            "update latency: from the change's send to its notification, ms",
	"ThresholdResult.pass":                      "whether it held",
	"SegmentResult.dir":                         "the segment's results directory",
	"SegmentResult.segment":                     "its share of the test (FROM:TO)",
	"SegmentResult.started":                     "when its window began",
	"SegmentResult.duration_s":                  "its measured window, seconds",
	"SegmentResult.errors":                      "its failed ops",
	"SegmentResult.dropped":                     "its dropped arrivals",
	"SegmentResult.rate":                        "its completed ops per second",
	"SegmentResult.vus":                         "its VUs",
	"SegmentResult.interrupted":                 "a signal ended it early",
	"SegmentResult.stop_reason":                 "why it stopped early",
	"ResumeSummary.attempts":                    "reconnect attempts",
	"ResumeSummary.accepted":                    "those the server accepted",
	"ResumeSummary.time_to_resume_ms":           "from the break to the resumed stream's headers (or the attempt's failure), ms",
	"LedgerSummary.streams":                     "streams judged",
	"LedgerSummary.faulty_streams":              "streams with at least one verdict",
	"NotificationSummary.log_messages":          "notifications/message received",
	"NotificationSummary.tools_list_changed":    "notifications/tools/list_changed received",
	"NotificationSummary.resources_updated":     "notifications/resources/updated received",
	"CheckSummary.check":                        "the check as written",
	"CheckSummary.passed":                       "results it passed",
	"CheckSummary.failed":                       "results it failed",
	"TLSSummary.handshakes":                     "full TLS handshakes",
	"TLSSummary.resumed":                        "resumed ones",
	"TLSSummary.failed":                         "failed ones",
	"TLSSummary.versions":                       "handshakes by TLS version",
	"TLSSummary.handshake_ms":                   "handshake time, ms",
	"OAuthSummary.issuer":                       "the authorization server",
	"OAuthSummary.token_endpoint":               "its token endpoint",
	"OAuthSummary.resource":                     "the RFC 8707 resource asked for",
	"OAuthSummary.scopes":                       "the scopes asked for",
	"OAuthSummary.token_fetches":                "tokens fetched",
	"OAuthSummary.refreshes":                    "of which refreshes before expiry",
	"OAuthSummary.failures":                     "failed token requests",
	"OAuthSummary.fetch_ms":                     "token fetch time, ms",
	"OAuthSummary.challenges":                   "401 challenges met",
	"OAuthSummary.last_error":                   "the authorization server's last refusal",
	"CheckFailure.seen":                         "the value the check saw",
	"CheckFailure.start":                        "the op's actual start",
}

func parseFieldComments(t *testing.T, pkg string) map[string]string {
	t.Helper()
	out := map[string]string{}
	rel, ok := strings.CutPrefix(pkg, modulePath)
	if !ok {
		return out // another module's type: no comments here
	}
	dir := filepath.Join("../..", filepath.FromSlash(strings.TrimPrefix(rel, "/")))
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				switch {
				case ts.Doc != nil:
					out[ts.Name.Name] = ts.Doc.Text()
				case gd.Doc != nil && len(gd.Specs) == 1:
					out[ts.Name.Name] = gd.Doc.Text()
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				last := "" // the doc of the field before: "Sweep steps the load …; Soak configures a soak" speaks of both
				for _, fl := range st.Fields.List {
					text := ""
					switch {
					case fl.Doc != nil:
						text = fl.Doc.Text()
					case fl.Comment != nil:
						text = fl.Comment.Text()
					}
					for _, n := range fl.Names {
						t := text
						if t == "" && last != "" && regexp.MustCompile(`\b`+n.Name+`\b`).MatchString(last) {
							t = last
						}
						out[ts.Name.Name+"."+n.Name] = t
					}
					if text != "" {
						last = text
					}
				}
			}
		}
	}
	return out
}

func TestDocsSummarySchema(t *testing.T) {
	page, visited := genSummarySchema(t)
	checkSchemaPage(t, summarySchemaDoc, "TestDocsSummarySchema", page, visited, schemaNotes)
}

// docs/reference/profile-schema.md is the profile YAML's schema, made the
// same way from the profile's Go types (yaml tags, doc comments), checked
// by TestDocsProfileSchema (-update or MCPBENCH_UPDATE_DOCS=1 rewrites it).
const profileSchemaDoc = "../../docs/reference/profile-schema.md"

const profileSchemaHead = `# The profile schema

A profile is a YAML file (or a built-in: ` + "`mcpbench profiles NAME`" + ` prints one). This page lists every field,
generated from the Go types the file is read into — a test fails when it is stale (` + "`go test ./cmd/mcpbench -run\nTestDocsProfileSchema`; `-update` rewrites it" + `) — so each field's meaning is its Go doc comment. Flags
override the fields (` + "`--vus`, `--rate`, `--url`" + ` …); the built-ins and an annotated example:
[profiles.md](profiles.md). A profile with mistakes is refused with every mistake listed, by its field.

Types: ` + "`string`, `number`, `bool`; `duration` is written `500ms`, `10s`, `2m`, `1h`; `size` is `64MiB`,\n`512KiB`, `16MB` or a number of bytes; `[]T` a list of T; `{string: T}` a mapping whose values are T." + `

`

// profileNotes say what a profile field without a doc comment holds.
var profileNotes = map[string]string{
	"Profile.Name":           "the profile's name, printed in the summary and recorded in run.json",
	"Profile.Description":    "one line about what it runs (`mcpbench profiles` prints it)",
	"Profile.Timeouts":       "the driver's timeouts (--connect-timeout, --timeout, --stream-idle-timeout)",
	"Profile.Resume":         "how broken streams are resumed (--reconnect, --retry-default, --max-resumes, --reissue)",
	"Profile.Ops":            "the operations: a weighted mix, or the library a scenario's steps name",
	"StageSpec.Duration":     "how long the stage moves the target to its own",
	"Timeouts.Connect":       "connecting, TLS included (--connect-timeout, default 5 s)",
	"Timeouts.Request":       "a request until its answer begins: a stream's response headers, a JSON answer's end (--timeout, default 30 s)",
	"Timeouts.StreamIdle":    "a response stream without a complete event or keep-alive (--stream-idle-timeout, default 30 s)",
	"ScenarioSpec.Name":      "the scenario's name: its rows are NAME#STEP:OP, its thresholds NAME:iteration_p99 …",
	"ScenarioSpec.Steps":     "the steps, run in order per iteration",
	"Plan.Faults":            "the faults, each drawn per request or stream with its probability",
	"Plan.Storm":             "a storm: every open stream of the target kind cut at once (--storm)",
	"OAuthSpec.ClientID":     "the client id of the client-credentials grant (--oauth-client-id)",
	"SweepSpec.From":         "the first step's load (--from)",
	"SweepSpec.To":           "the last step's load (--to)",
	"SweepSpec.SLO":          "the SLO each step is judged against (--slo-p99, --slo-errors)",
	"AbortSpec.Threshold":    "the threshold, as in thresholds:",
	"CompleteArgument.Name":  "the argument completed",
	"CompleteArgument.Value": "its value so far",
	"CancelSpec.After":       "how long after the request was sent the cancel goes",
	"CancelSpec.P":           "the share of calls cancelled, 0..1 (seeded)",
	"Fault.Action":           "cut, stall or delay",
}

var yamlUnmarshaler = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

func genProfileSchema(t *testing.T) (string, map[string]bool) {
	sc := schema{tag: "yaml", rootHeading: "## The top-level mapping (`Profile`)", notes: profileNotes, custom: func(t reflect.Type) (string, []reflect.Type, bool) {
		if t.Kind() == reflect.Pointer || !reflect.PointerTo(t).Implements(yamlUnmarshaler) {
			return "", nil, false
		}
		switch t.Kind() {
		case reflect.Int64:
			if t.Name() == "Duration" {
				return "duration", nil, true
			}
			return "size", nil, true
		case reflect.Struct: // a mapping, or a short form its section's text gives
			return "[" + t.Name() + "](#" + strings.ToLower(t.Name()) + ") or its short form", []reflect.Type{t}, true
		}
		return "`" + t.Name() + "`", nil, true
	}}
	return sc.gen(t, profileSchemaHead, reflect.TypeOf(profile.Profile{}))
}

func TestDocsProfileSchema(t *testing.T) {
	page, visited := genProfileSchema(t)
	checkSchemaPage(t, profileSchemaDoc, "TestDocsProfileSchema", page, visited, profileNotes)
}

// docs/reference/run-json.md is run.json's schema, made the same way from
// results.RunInfo, checked by TestDocsRunJSONSchema (-update rewrites it).
const runJSONSchemaDoc = "../../docs/reference/run-json.md"

const runJSONSchemaHead = `# run.json

` + "`run.json`" + ` in a results directory says what ran, so a result can be understood and reproduced: the command,
the versions, the host, the target and the profile as resolved. It is written when the run starts. This page is
generated from the Go type it is written from (` + "`go test ./cmd/mcpbench -run TestDocsRunJSONSchema`; `-update`\nrewrites it" + `). The other files: [results.md](results.md).

` + "`spec`" + ` is the effective profile (flags applied), written with the Go field names of the profile's types as its
keys (` + "`Ops[0].Arguments`" + `, as ` + "`compare`" + ` names the differences): the fields are those of the
[profile schema](profile-schema.md).

`

// runJSONNotes say what a run.json field without a doc comment holds.
var runJSONNotes = map[string]string{
	"RunInfo.Tool":               "\"mcpbench\": the marker --overwrite looks for before it removes a directory",
	"RunInfo.Version":            "mcpbench's version (\"dev\" in a source build)",
	"RunInfo.GoVersion":          "the Go toolchain that built it",
	"RunInfo.OS":                 "the operating system (GOOS)",
	"RunInfo.Arch":               "the architecture (GOARCH)",
	"RunInfo.NumCPU":             "the machine's cores",
	"RunInfo.Started":            "when the run started",
	"RunInfo.Target":             "the endpoint (credentials redacted)",
	"RunInfo.Embedded":           "true when the target was the embedded reference server",
	"RunInfo.ServerMode":         "the embedded server's mode (stateful, stateless, json, 2026-07-28)",
	"RunInfo.ProtocolRequested":  "--protocol as given (auto by default)",
	"RunInfo.ProtocolNegotiated": "the version negotiated",
	"RunInfo.Profile":            "the profile's name",
	"RunInfo.Seed":               "the seed of the op mix, jitter and chaos",
}

func TestDocsRunJSONSchema(t *testing.T) {
	sc := schema{tag: "json", rootHeading: "## The top-level object (`RunInfo`)", notes: runJSONNotes, custom: func(t reflect.Type) (string, []reflect.Type, bool) {
		if t.Kind() == reflect.Interface {
			return "object", nil, true
		}
		return "", nil, false
	}}
	page, visited := sc.gen(t, runJSONSchemaHead, reflect.TypeOf(results.RunInfo{}))
	checkSchemaPage(t, runJSONSchemaDoc, "TestDocsRunJSONSchema", page, visited, runJSONNotes)
}

// checkSchemaPage compares a generated page with the committed one (or
// rewrites it with -update or MCPBENCH_UPDATE_DOCS=1), and checks that
// every note names a field the page has.
func checkSchemaPage(t *testing.T, path, test, page string, visited map[string]bool, notes map[string]string) {
	t.Helper()
	for k := range notes {
		if !visited[k] {
			t.Errorf("notes[%q]: no such field (renamed? moved?)", k)
		}
	}
	rel := strings.TrimPrefix(path, "../../")
	if updateDocs() {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", rel)
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; generate it with: go test ./cmd/mcpbench -run %s -update", err, test)
	}
	if string(have) != page {
		t.Errorf("%s is stale: it differs from the schema the Go types give (first difference at line %d); regenerate with: go test ./cmd/mcpbench -run %s -update (or MCPBENCH_UPDATE_DOCS=1), and commit it", rel, firstDiffLine(have, []byte(page)), test)
	}
}
