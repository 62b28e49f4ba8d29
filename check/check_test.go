package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
)

const echoResult = `{"content":[{"type":"text","text":"hello"}],"structuredContent":{"executions":3,"items":["a","b"],"note":null}}`

// Each check passes or fails on a result as its operator says; a failure
// keeps the value seen.
func TestEval(t *testing.T) {
	for _, tc := range []struct {
		expr, result string
		ok           bool
		seen         string
	}{
		{`content.0.text == "hello"`, echoResult, true, ""},
		{`content.0.text != "hello"`, echoResult, false, `"hello"`},
		{`content.0.text == "bye"`, echoResult, false, `"hello"`},
		{`content.0.text ~ "^hel"`, echoResult, true, ""},
		{`content.0.text~"^x"`, echoResult, false, `"hello"`},
		{`content.0.text != ""`, `{"content":[{"type":"text","text":""}]}`, false, `"" (empty)`},
		{`content.1.text == "hello"`, echoResult, false, "(missing)"},
		{`content.#(type=="text").text == "hello"`, echoResult, true, ""},
		{`structured.executions >= 1`, echoResult, true, ""},
		{`structured.executions < 3`, echoResult, false, "3"},
		{`structured.executions > 2.5`, echoResult, true, ""},
		{`structured.executions <= "3"`, echoResult, false, ""}, // parse error below, not here
		{`structured.items.# == 2`, echoResult, true, ""},
		{`structured.note == null`, echoResult, true, ""},
		{`structured.executions == "3"`, echoResult, false, "3"}, // type matters
		{`is_error == false`, echoResult, true, ""},
		{`is_error == true`, echoResult, false, "false (absent)"},
		{`is_error == false`, `{"content":[],"isError":true}`, false, "true"},
		{`is_error != true`, `{"content":[],"isError":false}`, true, ""},
		{`structured.executions ~ "^[0-9]+$"`, echoResult, true, ""},
	} {
		c, err := Parse(tc.expr)
		if tc.expr == `structured.executions <= "3"` {
			if err == nil {
				t.Errorf("%s: parsed, want an error (< compares numbers)", tc.expr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		ok, seen := c.Eval([]byte(tc.result))
		if ok != tc.ok || seen != tc.seen {
			t.Errorf("%s on %s = %v, %q; want %v, %q", tc.expr, tc.result, ok, seen, tc.ok, tc.seen)
		}
	}
}

// A malformed check is an error that says what is wrong.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{``, "empty"},
		{`content.0.text`, "no operator"},
		{`== "x"`, "no path"},
		{`content.0.text == hello`, "not a JSON literal"},
		{`content.0.text == {"a":1}`, "not an object or array"},
		{`content.0.text ~ 3`, "regular expression in double quotes"},
		{`content.0.text ~ "("`, "regular expression: error parsing"},
		{`structured.n > "x"`, "compares numbers"},
		{`is_error == 1`, "is_error takes == true"},
	} {
		_, err := Parse(tc.expr)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax with %q", tc.expr, err, tc.want)
		}
	}
}

// A passing check allocates nothing; Inspect with passing checks neither.
func TestPassAllocatesNothing(t *testing.T) {
	var cs []*Check
	for _, e := range []string{`content.0.text == "hello"`, `content.0.text ~ "^h"`, `structured.executions >= 1`, `is_error == false`} {
		c, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	s, err := NewSet(cs, "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	result := []byte(echoResult)
	var res driver.Result
	n := testing.AllocsPerRun(100, func() {
		res.Checks = driver.CheckOutcome{}
		s.Inspect(result, &res)
	})
	if n != 0 {
		t.Errorf("%.1f allocations per Inspect, want 0", n)
	}
	if res.Checks.Ran != 0b1111 || res.Checks.Failed != 0 {
		t.Errorf("outcome %+v, want 4 run, none failed", res.Checks)
	}
}

// A check fails an op when it fails on any page; the first value seen
// stays.
func TestOutcomeAcrossPages(t *testing.T) {
	c, _ := Parse(`structured.n == 1`)
	s, _ := NewSet([]*Check{c}, "", nil)
	var res driver.Result
	for _, page := range []string{`{"structuredContent":{"n":1}}`, `{"structuredContent":{"n":2}}`, `{"structuredContent":{"n":3}}`} {
		s.Inspect([]byte(page), &res)
	}
	if res.Checks.Ran != 1 || res.Checks.Failed != 1 || res.Checks.Seen[0] != "2" {
		t.Errorf("outcome %+v, want check 0 failed seeing 2", res.Checks)
	}
}

// output_schema validates structuredContent against the tool's declared
// schema, and says why it fails.
func TestOutputSchema(t *testing.T) {
	sc := NewSchemas()
	ts := newToolSchemas()
	ts.add([]byte(`{"tools":[{"name":"count","outputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}},{"name":"echo"},{"name":"bad","outputSchema":{"type":7}}]}`))
	sc.byVU[0] = ts
	c, err := Parse(" output_schema ")
	if err != nil || !c.IsOutputSchema() {
		t.Fatalf("Parse(output_schema) = %v, %v", c, err)
	}
	if _, err := NewSet([]*Check{c}, "", sc); err == nil {
		t.Error("output_schema on an op without a tool: no error")
	}
	for _, tc := range []struct {
		tool, result string
		vu           int
		ok           bool
		seen         string
	}{
		{"count", `{"structuredContent":{"n":2}}`, 0, true, ""},
		{"count", `{"structuredContent":{"n":0}}`, 0, false, "minimum"},
		{"count", `{"structuredContent":{"m":1}}`, 0, false, "n"},
		{"count", `{"content":[]}`, 0, false, "no structuredContent"},
		{"echo", `{"structuredContent":{}}`, 0, false, "declares no outputSchema"},
		{"nosuch", `{"structuredContent":{}}`, 0, false, "not in tools/list"},
		{"bad", `{"structuredContent":{}}`, 0, false, "does not compile"},
		{"count", `{"structuredContent":{"n":2}}`, 1, false, "no tools/list for this session"},
	} {
		s, err := NewSet([]*Check{c}, tc.tool, sc)
		if err != nil {
			t.Fatal(err)
		}
		res := driver.Result{VU: tc.vu}
		s.Inspect([]byte(tc.result), &res)
		ok := res.Checks.Failed == 0
		seen := ""
		if !ok {
			seen = res.Checks.Seen[0]
		}
		if ok != tc.ok || !strings.Contains(seen, tc.seen) {
			t.Errorf("%s %s: ok %v seen %q; want %v with %q", tc.tool, tc.result, ok, seen, tc.ok, tc.seen)
		}
	}
}
