package argtmpl

import (
	"fmt"
	"slices"
	"text/template/parse"

	"github.com/mcpbench/mcpbench/driver"
)

// The template side of correlation ({{step}}, {{env}}; the run side is
// the engine's: package workload, correlate.go).

// Ref is one {{step "name" "path"}} of an op's templates: the value at
// gjson path Path of the result of the scenario step named Step; Field is
// the template's field (ops[1].tool).
type Ref struct {
	Step, Path string
	Field      string
}

// String is the reference as written.
func (r Ref) String() string { return fmt.Sprintf("{{step %q %q}}", r.Step, r.Path) }

// Captured is one value a VU keeps for later steps of its iteration.
type Captured struct {
	Raw  []byte       // the value as JSON (valid when OK)
	OK   bool         // set by the step's result in this iteration
	Fail driver.Class // the step failed: its class (OK false)
}

// refAction compiles {{step "name" "path"}} and {{env "KEY"}} (args: the
// action's arguments after the function).
func (c *argCompiler) refAction(field string, n *parse.ActionNode, fn string, args []parse.Node) (step, bool) {
	var strs []string
	for _, x := range args {
		s, ok := x.(*parse.StringNode)
		if !ok {
			c.errs = append(c.errs, fmt.Errorf("%s: %s: %s takes quoted strings", field, n, fn))
			return step{}, true
		}
		strs = append(strs, s.Text)
	}
	if fn == fnEnv {
		if len(strs) != 1 {
			c.errs = append(c.errs, fmt.Errorf("%s: %s: env takes 1 argument (the key), got %d", field, n, len(strs)))
			return step{}, true
		}
		v, ok := c.a.env[strs[0]]
		if !ok {
			c.errs = append(c.errs, fmt.Errorf("%s: %s: %q is not given: pass -e %s=VALUE (or set env: in the profile)", field, n, strs[0], strs[0]))
			return step{}, true
		}
		return step{kind: stepLit, lit: appendEscaped(nil, []byte(v))}, true
	}
	if len(strs) != 2 {
		c.errs = append(c.errs, fmt.Errorf(`%s: %s: step takes 2 arguments (the step's name and a gjson path, e.g. {{step "list" "tools.0.name"}}), got %d`, field, n, len(strs)))
		return step{}, true
	}
	if strs[0] == "" || strs[1] == "" {
		c.errs = append(c.errs, fmt.Errorf("%s: %s: the step's name and the path must not be empty", field, n))
		return step{}, true
	}
	r := Ref{Step: strs[0], Path: strs[1], Field: field}
	i := slices.IndexFunc(c.a.refs, func(x Ref) bool { return x.Step == r.Step && x.Path == r.Path })
	if i < 0 {
		i = len(c.a.refs)
		c.a.refs = append(c.a.refs, r)
	}
	return step{kind: stepRefWhole, ref: i}, true
}

// usesFunc reports whether the tree under n calls one of the functions.
func usesFunc(n parse.Node, fns ...string) bool {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return false
		}
		return slices.ContainsFunc(n.Nodes, func(x parse.Node) bool { return usesFunc(x, fns...) })
	case *parse.ActionNode:
		return usesFunc(n.Pipe, fns...)
	case *parse.TemplateNode:
		return usesFunc(n.Pipe, fns...)
	case *parse.PipeNode:
		if n == nil {
			return false
		}
		for _, cmd := range n.Cmds {
			if slices.ContainsFunc(cmd.Args, func(x parse.Node) bool { return usesFunc(x, fns...) }) {
				return true
			}
		}
	case *parse.IfNode:
		return usesFunc(n.Pipe, fns...) || usesFunc(n.List, fns...) || usesFunc(n.ElseList, fns...)
	case *parse.RangeNode:
		return usesFunc(n.Pipe, fns...) || usesFunc(n.List, fns...) || usesFunc(n.ElseList, fns...)
	case *parse.WithNode:
		return usesFunc(n.Pipe, fns...) || usesFunc(n.List, fns...) || usesFunc(n.ElseList, fns...)
	case *parse.IdentifierNode:
		return slices.Contains(fns, n.Ident)
	}
	return false
}

// appendRef appends the value of ref r: the JSON value (whole) or its
// text, JSON-escaped, inside a string.
func appendRef(dst []byte, st *renderState, r int, whole bool) []byte {
	if st.vals == nil || r >= len(st.bind) {
		if whole {
			return append(dst, "null"...) // unbound (cannot happen: validateRefs)
		}
		return dst
	}
	v := st.vals[st.bind[r]].Raw
	switch {
	case whole:
		return append(dst, v...)
	case len(v) >= 2 && v[0] == '"':
		return append(dst, v[1:len(v)-1]...) // already JSON-escaped
	}
	return appendEscaped(dst, v)
}
