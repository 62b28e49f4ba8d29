package profile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/units"
)

// The rest of MCP in profiles: the ops resources/templates/list,
// resources/subscribe and resources/unsubscribe (uri), completion/complete
// (prompt or uri, argument), logging/setLevel (level); and, on any op,
// cancel (cancel a share of its calls) and max_pages (list ops), and on
// tools/call changes (the resource a call changes, for subscriptions).

// CompleteArgument is the argument completion/complete asks values for.
type CompleteArgument struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// CancelSpec cancels a share of an op's calls: each call is drawn with
// probability P and, if still in flight After its request was sent,
// cancelled with notifications/cancelled (2026-07-28: its stream is
// closed). Cancelled calls are reported apart from completed ones.
type CancelSpec struct {
	After Duration `yaml:"after"`
	P     float64  `yaml:"p"`
}

// LogLevels are the levels of logging/setLevel (RFC 5424 severities).
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// moreName is the default label of an op of a method without tool or
// prompt: the method, with the uri, prompt or level it names.
func (o *OpSpec) moreName() string {
	switch o.Method {
	case "resources/subscribe", "resources/unsubscribe":
		return o.Method + ":" + o.URI
	case "completion/complete":
		if o.URI != "" {
			return o.Method + ":" + o.URI
		}
		return o.Method + ":" + o.Prompt
	case "logging/setLevel":
		return o.Method + ":" + o.Level
	}
	return o.Method
}

// moreParams renders the params of the methods params() does not know
// (nil, nil for a method without params).
func (o *OpSpec) moreParams() (json.RawMessage, error) {
	var v map[string]any
	switch o.Method {
	case "logging/setLevel":
		v = map[string]any{"level": o.Level}
	case "resources/subscribe", "resources/unsubscribe":
		v = map[string]any{"uri": o.URI}
	case "completion/complete":
		ref := map[string]any{"type": "ref/prompt", "name": o.Prompt}
		if o.URI != "" {
			ref = map[string]any{"type": "ref/resource", "uri": o.URI}
		}
		var arg CompleteArgument
		if o.Argument != nil {
			arg = *o.Argument
		}
		v = map[string]any{"ref": ref, "argument": map[string]any{"name": arg.Name, "value": arg.Value}}
		if len(o.Arguments) > 0 {
			ctx := map[string]string{}
			for k, a := range o.Arguments {
				ctx[k] = fmt.Sprint(a) // Resolved arguments are strings
			}
			v["context"] = map[string]any{"arguments": ctx}
		}
	default:
		return nil, nil
	}
	return json.Marshal(v)
}

// ApplyMore sets the driver op's cancel, changed resource and page bound.
func (o *OpSpec) ApplyMore(op *driver.Op) {
	if c := o.Cancel; c != nil {
		op.Cancel = &driver.Cancel{After: c.After.D(), P: c.P}
	}
	op.Changes = o.Changes
	op.MaxPages = o.MaxPages
}

var listMethods = []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"}

// validateMore checks the fields of the rest of MCP on op f, each error
// naming its field.
func (o *OpSpec) validateMore(f string) []error {
	var errs problems
	switch o.Method {
	case "logging/setLevel":
		if !slices.Contains(LogLevels, o.Level) {
			errs.add("%s.level: %q, want one of %s", f, o.Level, strings.Join(LogLevels, ", "))
		}
	case "resources/subscribe", "resources/unsubscribe":
		if o.URI == "" {
			errs.add("%s.uri: required for %s", f, o.Method)
		}
	case "completion/complete":
		if (o.Prompt == "") == (o.URI == "") {
			errs.add("%s: completion/complete needs prompt (a prompt's argument) or uri (a resource template's), one of them", f)
		}
		if o.Argument == nil || o.Argument.Name == "" {
			errs.add("%s.argument.name: required for completion/complete (the argument to complete)", f)
		}
	}
	if o.Level != "" && o.Method != "logging/setLevel" {
		errs.add("%s.level: only logging/setLevel takes a level", f)
	}
	if o.Argument != nil && o.Method != "completion/complete" {
		errs.add("%s.argument: only completion/complete takes an argument", f)
	}
	if o.Changes != "" && o.Method != "tools/call" {
		errs.add("%s.changes: only a tools/call changes a resource", f)
	}
	if o.MaxPages < 0 || o.MaxPages > 0 && !slices.Contains(listMethods, o.Method) {
		errs.add("%s.max_pages: %d, want ≥ 0 and only on a list op (%s)", f, o.MaxPages, strings.Join(listMethods, ", "))
	}
	if c := o.Cancel; c != nil {
		if c.After <= 0 {
			errs.add("%s.cancel.after: %v, want > 0 (cancel calls still in flight this long after they were sent)", f, c.After.D())
		}
		if !(c.P > 0 && c.P <= 1) {
			errs.add("%s.cancel.p: %g, want a share in (0, 1]", f, c.P)
		}
	}
	return errs
}

// validateSubscriptions checks what ops that subscribe or change
// resources need: a GET stream (legacy servers send
// notifications/resources/updated on it), and a subscription to every
// resource an op changes.
func (p *Profile) validateSubscriptions() []error {
	var errs problems
	subscribed := map[string]bool{}
	for i, o := range p.Ops {
		if o.Method == "resources/subscribe" {
			subscribed[o.URI] = true
			if !p.GETStream {
				errs.add("ops[%d]: resources/subscribe needs get_stream: true{?get_stream}: servers send notifications/resources/updated on the standalone GET stream", i)
			}
		}
	}
	for i, o := range p.Ops {
		if o.Changes != "" && !subscribed[o.Changes] {
			errs.add("ops[%d].changes: no resources/subscribe op subscribes to %q, so no update can be measured", i, o.Changes)
		}
	}
	return errs
}

// ParseCancel reads a cancel spec as the --cancel flag writes it:
// "after=50ms p=0.1" (spaces or commas between the fields; p defaults to
// 1). Errors name the field.
func ParseCancel(s string) (CancelSpec, error) {
	c := CancelSpec{P: 1}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		k, v, ok := strings.Cut(f, "=")
		switch {
		case !ok:
			return c, fmt.Errorf("%q: want key=value (after=50ms p=0.1)", f)
		case k == "after":
			d, err := time.ParseDuration(v)
			if hint, ok := units.UnitHint(v); ok && err != nil {
				return c, fmt.Errorf("after=%s: %s", v, hint)
			}
			if err != nil || d <= 0 {
				return c, fmt.Errorf("after=%s: want a positive duration such as 50ms", v)
			}
			c.After = Duration(d)
		case k == "p":
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || !(p > 0 && p <= 1) {
				return c, fmt.Errorf("p=%s: want a share in (0, 1]", v)
			}
			c.P = p
		default:
			return c, fmt.Errorf("%q: unknown field (want after and p)", k)
		}
	}
	if c.After <= 0 {
		return c, fmt.Errorf("%q: after= is required (cancel calls still in flight this long after they were sent)", s)
	}
	return c, nil
}
