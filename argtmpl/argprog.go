package argtmpl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"text/template/parse"
)

// The compile-time side of argument templates (see args.go): the fast
// program of a simple template, the check of {{.column}} references, the
// dry run of full templates.

// simple compiles nodes (a template's top level) to steps when every node
// is text or an action the fast program knows: a template function with
// constant arguments, or {{.column}}. Literal steps hold JSON-escaped
// text; a column is a stepCellWhole (the caller turns it into
// stepCellInner inside a string). ok is false for anything else: the
// template is executed by text/template. Wrong argument counts or values
// are errors.
func (c *argCompiler) simple(field string, nodes []parse.Node) (prog []step, ok bool) {
	for _, n := range nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			prog = append(prog, step{kind: stepLit, lit: appendEscaped(nil, n.Text)})
		case *parse.CommentNode:
		case *parse.ActionNode:
			s, sok := c.simpleAction(field, n)
			if !sok {
				return nil, false
			}
			prog = append(prog, s)
		default:
			return nil, false
		}
	}
	return prog, true
}

// simpleAction compiles one {{...}} of the fast forms.
func (c *argCompiler) simpleAction(field string, n *parse.ActionNode) (step, bool) {
	if len(n.Pipe.Decl) > 0 || len(n.Pipe.Cmds) != 1 {
		return step{}, false
	}
	args := n.Pipe.Cmds[0].Args
	if f, ok := args[0].(*parse.FieldNode); ok && len(args) == 1 && len(f.Ident) == 1 {
		return step{kind: stepCellWhole, col: c.a.data.column(f.Ident[0])}, true // checkFields checked it
	}
	id, ok := args[0].(*parse.IdentifierNode)
	if !ok {
		return step{}, false
	}
	if id.Ident == fnStep || id.Ident == fnEnv {
		return c.refAction(field, n, id.Ident, args[1:])
	}
	var consts []int64
	for _, x := range args[1:] {
		num, ok := x.(*parse.NumberNode)
		if !ok || !num.IsInt {
			return step{}, false // an expression: text/template evaluates it
		}
		consts = append(consts, num.Int64)
	}
	want := map[string]int{fnSeq: 0, fnVU: 0, fnIteration: 0, fnUUID: 0, fnRandInt: 2, fnRandString: 1}
	w, ours := want[id.Ident]
	if !ours {
		return step{}, false // a builtin (print, printf …)
	}
	if len(consts) != w {
		c.errs = append(c.errs, fmt.Errorf("%s: %s: %s takes %d arguments, got %d", field, n, id.Ident, w, len(consts)))
		return step{}, true
	}
	s := step{kind: map[string]stepKind{fnSeq: stepSeq, fnVU: stepVU, fnIteration: stepIteration, fnUUID: stepUUID,
		fnRandInt: stepRandInt, fnRandString: stepRandString}[id.Ident]}
	switch id.Ident {
	case fnRandInt:
		s.a, s.b = consts[0], consts[1]
		if s.a > s.b {
			c.errs = append(c.errs, fmt.Errorf("%s: %s: the lower bound %d is above the upper %d", field, n, s.a, s.b))
		}
	case fnRandString:
		s.a = consts[0]
		if s.a < 0 || s.a > maxRandString {
			c.errs = append(c.errs, fmt.Errorf("%s: %s: length %d, want 0 to %d", field, n, s.a, maxRandString))
		}
	}
	return s, true
}

// checkFields checks every {{.column}} (and {{$.column}}) of the tree
// under n: a data file must be set, have the column, and (JSONL) every
// row must hold it. top is false under range and with, where dot is no
// longer the row.
func (c *argCompiler) checkFields(field string, n parse.Node, top bool) error {
	var col string
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, x := range n.Nodes {
			if err := c.checkFields(field, x, top); err != nil {
				return err
			}
		}
		return nil
	case *parse.ActionNode:
		return c.checkFields(field, n.Pipe, top)
	case *parse.TemplateNode:
		return c.checkFields(field, n.Pipe, top)
	case *parse.PipeNode:
		if n == nil {
			return nil
		}
		for _, cmd := range n.Cmds {
			for _, x := range cmd.Args {
				if err := c.checkFields(field, x, top); err != nil {
					return err
				}
			}
		}
		return nil
	case *parse.IfNode:
		return c.checkBranch(field, &n.BranchNode, top, top)
	case *parse.RangeNode:
		return c.checkBranch(field, &n.BranchNode, top, false)
	case *parse.WithNode:
		return c.checkBranch(field, &n.BranchNode, top, false)
	case *parse.FieldNode:
		if !top {
			return nil
		}
		col = n.Ident[0]
	case *parse.VariableNode:
		if n.Ident[0] != "$" || len(n.Ident) < 2 {
			return nil
		}
		col = n.Ident[1]
	default:
		return nil
	}
	return c.checkColumn(field, col)
}

func (c *argCompiler) checkBranch(field string, b *parse.BranchNode, top, inner bool) error {
	if err := c.checkFields(field, b.Pipe, top); err != nil {
		return err
	}
	if err := c.checkFields(field, b.List, inner); err != nil {
		return err
	}
	return c.checkFields(field, b.ElseList, top)
}

// checkColumn checks that the op's data file has column col in every row.
func (c *argCompiler) checkColumn(field, col string) error {
	d := c.a.data
	if d == nil {
		return fmt.Errorf("%s: {{.%s}} %w", field, col, errNoData)
	}
	i := d.column(col)
	if i < 0 {
		return fmt.Errorf("%s: {{.%s}}: no column %q in %s (columns: %v)", field, col, col, d.file, d.columns)
	}
	for r, row := range d.rows {
		if row[i].whole == nil {
			return fmt.Errorf("%s: {{.%s}}: row %d of %s has no %q", field, col, r+1, d.file, col)
		}
	}
	return nil
}

// literalJSON appends a fixed value that is not a string (a YAML number,
// bool …) as JSON.
func (c *argCompiler) literalJSON(field string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: %w", field, err))
		return
	}
	c.lit(string(b))
}

// dryRun executes every full template once per row of its data file (the
// first maxDryRows), or once without one, so that a template that cannot
// run is a profile error naming its field and the row.
func (a *Op) dryRun() []error {
	x := a.newExecState()
	rows := 1
	if a.data != nil {
		rows = min(len(a.data.rows), maxDryRows)
	}
	var errs []error
	for i := range a.tmpls {
		for r := range rows {
			x.st = renderState{dry: true, rowAt: r}
			x.err = nil
			a.execute(nil, i, x)
			if x.err != nil {
				where := ""
				if a.data != nil {
					where = " (row " + strconv.Itoa(r+1) + " of " + a.data.file + ")"
				}
				errs = append(errs, templateError(a.fields[i], where, x.err))
				break
			}
		}
	}
	return errs
}
