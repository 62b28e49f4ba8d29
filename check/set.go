package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/tidwall/gjson"
)

// Set is one op's checks, in order: check i is bit i of the op's
// driver.CheckOutcome. Immutable once built; safe for concurrent use.
type Set struct {
	Checks  []*Check
	tool    string   // the tools/call's tool, for output_schema
	schemas *Schemas // per-session output schemas (nil without output_schema)
}

// NewSet builds op's check set. tool is the op's tool name for a
// tools/call ("" otherwise: output_schema is then an error); schemas is
// where the sessions' output schemas are kept (needed when a check is
// output_schema). More than driver.MaxChecks checks is an error.
func NewSet(checks []*Check, tool string, schemas *Schemas) (*Set, error) {
	if len(checks) > driver.MaxChecks {
		return nil, fmt.Errorf("%d checks, at most %d an op", len(checks), driver.MaxChecks)
	}
	s := &Set{Checks: checks, tool: tool}
	for _, c := range checks {
		if !c.schema {
			continue
		}
		if tool == "" {
			return nil, fmt.Errorf("check %q: only a tools/call has an output schema", c.Expr)
		}
		if schemas == nil {
			return nil, fmt.Errorf("check %q: no schema store (internal)", c.Expr)
		}
		s.schemas = schemas
	}
	return s, nil
}

// Exprs returns the checks' expressions, in order.
func (s *Set) Exprs() []string {
	out := make([]string, len(s.Checks))
	for i, c := range s.Checks {
		out[i] = c.Expr
	}
	return out
}

// Inspect is the op's driver.Op.Inspect: it runs every check on result
// and records each outcome in res.Checks.
func (s *Set) Inspect(result []byte, res *driver.Result) {
	o := &res.Checks
	for i, c := range s.Checks {
		var ok bool
		var seen string
		if c.schema {
			ok, seen = s.schemas.validate(res.VU, s.tool, result)
		} else {
			ok, seen = c.Eval(result)
		}
		if ok {
			o.Pass(i)
		} else {
			o.Fail(i, seen)
		}
	}
}

// Schemas keeps, per session (by VU number: a VU's lanes share its
// session), the tools' output schemas compiled. Safe for concurrent use.
type Schemas struct {
	mu   sync.RWMutex
	byVU map[int]*toolSchemas
}

// NewSchemas returns an empty store.
func NewSchemas() *Schemas { return &Schemas{byVU: map[int]*toolSchemas{}} }

// toolSchemas is one session's tools/list, compiled.
type toolSchemas struct {
	err   error                           // tools/list failed
	tools map[string]*jsonschema.Resolved // tools with an outputSchema
	bad   map[string]string               // tools whose outputSchema did not compile: why
	known map[string]bool                 // every tool listed
}

// Fetch lists the tools of VU vu's session s once (every page) and keeps
// their output schemas compiled for the VU's later results, replacing
// what an earlier session of the VU left. Its error (tools/list failed)
// is also what the VU's output_schema checks then report.
func (sc *Schemas) Fetch(ctx context.Context, s *driver.Session, vu int) error {
	ts := newToolSchemas()
	op, err := driver.NewOp("tools/list (output schemas)", "tools/list", nil, false)
	if err != nil {
		return err
	}
	op.Inspect = func(result []byte, _ *driver.Result) { ts.add(result) }
	var res driver.Result
	s.Do(ctx, op, &res)
	if res.Err != nil {
		ts.err = fmt.Errorf("tools/list at session start failed: %w", res.Err)
	}
	sc.mu.Lock()
	sc.byVU[vu] = ts
	sc.mu.Unlock()
	return ts.err
}

func newToolSchemas() *toolSchemas {
	return &toolSchemas{tools: map[string]*jsonschema.Resolved{}, bad: map[string]string{}, known: map[string]bool{}}
}

// add compiles the tools of one tools/list page.
func (ts *toolSchemas) add(result []byte) {
	var page struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(result, &page); err != nil {
		ts.err = fmt.Errorf("tools/list at session start: %v", err)
		return
	}
	for _, t := range page.Tools {
		ts.known[t.Name] = true
		if len(bytes.TrimSpace(t.OutputSchema)) == 0 || string(bytes.TrimSpace(t.OutputSchema)) == "null" {
			continue
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(t.OutputSchema, &s); err != nil {
			ts.bad[t.Name] = err.Error()
			continue
		}
		r, err := s.Resolve(nil)
		if err != nil {
			ts.bad[t.Name] = err.Error()
			continue
		}
		ts.tools[t.Name] = r
	}
}

// validate checks result's structuredContent against tool's output
// schema in VU vu's session: ok, or what is wrong.
func (sc *Schemas) validate(vu int, tool string, result []byte) (bool, string) {
	sc.mu.RLock()
	ts := sc.byVU[vu]
	sc.mu.RUnlock()
	switch {
	case ts == nil:
		return false, "no tools/list for this session"
	case ts.err != nil:
		return false, shorten(ts.err.Error(), gjson.String)
	case ts.bad[tool] != "":
		return false, shorten("tool "+tool+": outputSchema does not compile: "+ts.bad[tool], gjson.String)
	case ts.tools[tool] == nil && !ts.known[tool]:
		return false, "tool " + tool + " is not in tools/list"
	case ts.tools[tool] == nil:
		return false, "tool " + tool + " declares no outputSchema"
	}
	r := gjson.GetBytes(result, "structuredContent")
	if !r.Exists() {
		return false, "no structuredContent"
	}
	var v any
	if err := json.Unmarshal([]byte(r.Raw), &v); err != nil {
		return false, shorten("structuredContent: "+err.Error(), gjson.String)
	}
	if err := ts.tools[tool].Validate(v); err != nil {
		return false, shorten(err.Error(), gjson.String)
	}
	return true, ""
}
