package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// The Grafana dashboard (dashboards/grafana/mcpbench.json) is checked
// against what the Prometheus endpoint serves: every metric its queries
// name, and every label they match or group by, must be served — so
// renaming a metric or a label here breaks this test until the dashboard
// follows.

const dashboardFile = "../dashboards/grafana/mcpbench.json"

// served scrapes a live endpoint (Serve, as --prometheus starts it) fed
// with a fake run — ops, errors of two classes, duplicated events the
// ledger catches — and a target sample, and returns each series name it
// serves with its label names (a histogram's _bucket, _sum and _count
// as the text format writes them).
func served(t *testing.T) map[string][]string {
	t.Helper()
	s, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background(), 0)
	synctest.Test(t, func(t *testing.T) {
		var pl planted
		hc, stop := mcptest.ServePipe(faultyFake(&pl))
		defer stop()
		p := &profile.Profile{Name: "grafana", URL: "http://fake/mcp", Rate: 100, Duration: profile.Duration(3 * time.Second),
			Ops: []profile.OpSpec{{Method: "tools/call", Tool: "echo", Progress: true, Weight: weight(1)}}}
		plan, err := workload.Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := workload.Run(t.Context(), plan, workload.Options{Sinks: []results.Sink{s.Sink}}); err != nil {
			t.Fatal(err)
		}
	})
	// The target's gauges appear with --target-pid's samples.
	s.Sink.Interval(&results.IntervalRecord{Row: results.Row{Target: &results.ProcRow{Cores: 0.5, RSSMB: 10, FDs: 12, Threads: 4}}, Phase: results.PhaseMeasure})
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string][]string{}
	sample := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		m := sample.FindStringSubmatch(sc.Text())
		if m == nil {
			continue // comments, blank lines
		}
		ls := out[m[1]]
		for _, l := range label.FindAllStringSubmatch(m[2], -1) {
			if !slices.Contains(ls, l[1]) {
				ls = append(ls, l[1])
			}
		}
		out[m[1]] = ls
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out["mcpbench_ops_total"]) == 0 || out["mcpbench_op_duration_seconds_bucket"] == nil {
		t.Fatalf("the endpoint serves no ops or histogram buckets: %v", out)
	}
	return out
}

// selector is a metric a PromQL expression names, with the labels its
// matchers ({op=~"$op"}) name.
type selector struct {
	name   string
	labels []string
}

// promqlRefs is a small PromQL tokenizer: the metrics an expression
// selects (identifiers not followed by "(", not keywords or aggregations, outside
// strings, ranges and Grafana variables) with their matchers' labels,
// and the labels it groups by (by, without, on, ignoring, group_left,
// group_right). It is no parser: it knows just enough to find names.
func promqlRefs(expr string) (sels []selector, grouping []string, err error) {
	keywords := map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
		// aggregations, which may be followed by "by (…)" rather than "("
		"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true, "count": true,
		"count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true}
	groupers := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	isStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isPart := func(c byte) bool { return isStart(c) || c >= '0' && c <= '9' }
	i, n := 0, len(expr)
	ident := func() string {
		j := i
		for i < n && isPart(expr[i]) {
			i++
		}
		return expr[j:i]
	}
	skipSpace := func() {
		for i < n && (expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n') {
			i++
		}
	}
	skipString := func() error {
		q := expr[i]
		for i++; i < n && expr[i] != q; i++ {
			if expr[i] == '\\' && q != '`' {
				i++
			}
		}
		if i >= n {
			return fmt.Errorf("unterminated string in %q", expr)
		}
		i++
		return nil
	}
	// labelList reads "(a, b)" after a grouping keyword.
	labelList := func() ([]string, error) {
		skipSpace()
		if i >= n || expr[i] != '(' {
			return nil, nil // group_left without labels
		}
		end := strings.IndexByte(expr[i:], ')')
		if end < 0 {
			return nil, fmt.Errorf("unclosed label list in %q", expr)
		}
		var ls []string
		for _, l := range strings.Split(expr[i+1:i+end], ",") {
			if l = strings.TrimSpace(l); l != "" {
				ls = append(ls, l)
			}
		}
		i += end + 1
		return ls, nil
	}
	// matchers reads "{a="x", b=~"y"}" and returns the label names.
	matchers := func() ([]string, error) {
		var ls []string
		for i++; i < n && expr[i] != '}'; {
			switch c := expr[i]; {
			case c == '"' || c == '\'' || c == '`':
				if err := skipString(); err != nil {
					return nil, err
				}
			case isStart(c):
				ls = append(ls, ident())
			default:
				i++
			}
		}
		if i >= n {
			return nil, fmt.Errorf("unclosed {} in %q", expr)
		}
		i++
		return ls, nil
	}
	for i < n {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if err := skipString(); err != nil {
				return nil, nil, err
			}
		case c == '$': // a Grafana variable: $op, ${datasource}, $__rate_interval
			i++
			if i < n && expr[i] == '{' {
				for i < n && expr[i] != '}' {
					i++
				}
				i++
			} else {
				ident()
			}
		case c == '[': // a range or subquery: durations and variables
			end := strings.IndexByte(expr[i:], ']')
			if end < 0 {
				return nil, nil, fmt.Errorf("unclosed [ in %q", expr)
			}
			i += end + 1
		case c == '{': // a selector without a name
			ls, err := matchers()
			if err != nil {
				return nil, nil, err
			}
			sels = append(sels, selector{labels: ls})
		case c >= '0' && c <= '9' || c == '.': // a number or a duration
			for i < n && (isPart(expr[i]) || expr[i] == '.') {
				i++
			}
		case isStart(c):
			id := ident()
			skipSpace()
			switch {
			case groupers[id]:
				ls, err := labelList()
				if err != nil {
					return nil, nil, err
				}
				grouping = append(grouping, ls...)
			case keywords[id]:
			case i < n && expr[i] == '(': // a function or an aggregation
			default:
				sel := selector{name: id}
				if i < n && expr[i] == '{' {
					ls, err := matchers()
					if err != nil {
						return nil, nil, err
					}
					sel.labels = ls
				}
				sels = append(sels, sel)
			}
		default:
			i++
		}
	}
	return sels, grouping, nil
}

// The tokenizer finds what it must, and nothing else.
func TestPromqlRefs(t *testing.T) {
	sels, grouping, err := promqlRefs(`histogram_quantile(0.99, sum by (le, op) (rate(mcpbench_op_duration_seconds_bucket{op=~"$op", x!="a}b"}[$__rate_interval]))) / on(op) group_left sum without (class) (mcpbench_ops_total offset 5m) > bool 0.5e3 and ${var}`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sels {
		got = append(got, s.name+"{"+strings.Join(s.labels, ",")+"}")
	}
	if strings.Join(got, " ") != "mcpbench_op_duration_seconds_bucket{op,x} mcpbench_ops_total{}" || strings.Join(grouping, ",") != "le,op,op,class" {
		t.Errorf("selectors %v grouping %v", got, grouping)
	}
	for _, bad := range []string{`sum(x{a="b)`, `rate(x[5m)`, `x{a="b"`} {
		if _, _, err := promqlRefs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasourceRef  `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Datasource *datasourceRef `json:"datasource"`
	GridPos    struct{ H, W, X, Y int }
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// panels are the dashboard's panels, those of collapsed rows included,
// rows left out.
func (d dashboard) panels() []panel {
	var out []panel
	for _, p := range d.Panels {
		if p.Type == "row" {
			out = append(out, p.Panels...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// The JSON is a Grafana dashboard: a title and uid, a Prometheus
// datasource variable every panel and query uses, panels with a type, a
// title, a place on the 24-column grid no other panel takes, and queries
// with distinct refIds; and it has the panels of the live page.
func TestGrafanaDashboardShape(t *testing.T) {
	d := readDashboard(t)
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 30 {
		t.Errorf("title %q uid %q schemaVersion %d: want a title, a uid, a current schema", d.Title, d.UID, d.SchemaVersion)
	}
	dsVar := ""
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			dsVar = v.Name
		}
	}
	if dsVar == "" {
		t.Fatal("no datasource variable of type prometheus in templating.list: an imported dashboard could not pick its Prometheus")
	}
	uses := func(ds *datasourceRef) bool {
		return ds != nil && ds.Type == "prometheus" && (ds.UID == "${"+dsVar+"}" || ds.UID == "$"+dsVar)
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" && !uses(v.Datasource) {
			t.Errorf("variable %s: datasource %+v, want the %s variable", v.Name, v.Datasource, dsVar)
		}
	}
	ids := map[int]bool{}
	taken := map[[2]int]string{}
	var titles []string
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v is off the 24-column grid", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[[2]int{x, y}]; ok {
					t.Fatalf("panels %q and %q overlap at (%d, %d)", other, p.Title, x, y)
				}
				taken[[2]int{x, y}] = p.Title
			}
		}
	}
	for _, p := range d.panels() {
		titles = append(titles, p.Title)
		if p.Type == "" || p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %d: type %q title %q, %d targets; want all three", p.ID, p.Type, p.Title, len(p.Targets))
		}
		if !uses(p.Datasource) {
			t.Errorf("panel %q: datasource %+v, want the %s variable", p.Title, p.Datasource, dsVar)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] || strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q: target %q (refId %q): want a distinct refId and an expression", p.Title, tg.Expr, tg.RefID)
			}
			refs[tg.RefID] = true
		}
	}
	for _, want := range []string{"Throughput vs target", "Response time percentiles", "Service time percentiles", "Errors by class", "Drops",
		"VUs and sessions", "GET streams", "Resumes and reconnects", "Ledger verdicts"} {
		if !slices.Contains(titles, want) {
			t.Errorf("no panel %q (the live page's); panels: %v", want, titles)
		}
	}
}

// Every metric the dashboard's queries name is one the endpoint serves,
// with the labels they match and group by.
func TestGrafanaQueriesMatchServedMetrics(t *testing.T) {
	d := readDashboard(t)
	names := served(t)
	type query struct{ where, expr string }
	var queries []query
	for _, p := range d.panels() {
		for _, tg := range p.Targets {
			queries = append(queries, query{fmt.Sprintf("panel %q %s", p.Title, tg.RefID), tg.Expr})
		}
	}
	labelValues := regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			json.Unmarshal(v.Query, &q.Query) // the older form: a string
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: query %q, want label_values(metric, label)", v.Name, q.Query)
			continue
		}
		if ls, ok := names[m[1]]; !ok || !slices.Contains(ls, m[2]) {
			t.Errorf("variable %s: %s{%s} is not served (served labels %v)", v.Name, m[1], m[2], ls)
		}
	}
	checked := 0
	for _, q := range queries {
		sels, grouping, err := promqlRefs(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		if len(sels) == 0 {
			t.Errorf("%s: %q names no metric", q.where, q.expr)
		}
		var exprLabels []string
		for _, s := range sels {
			ls, ok := names[s.name]
			if !ok {
				t.Errorf("%s: metric %s is not served by the Prometheus endpoint (query %q)", q.where, s.name, q.expr)
				continue
			}
			checked++
			exprLabels = append(exprLabels, ls...)
			for _, l := range s.labels {
				if !slices.Contains(ls, l) {
					t.Errorf("%s: %s has no label %q (it has %v)", q.where, s.name, l, ls)
				}
			}
		}
		for _, l := range grouping {
			if !slices.Contains(exprLabels, l) {
				t.Errorf("%s: groups by %q, which none of its metrics has (query %q)", q.where, l, q.expr)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d metric references checked: the tokenizer finds too little", checked)
	}
}
