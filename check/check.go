package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// ErrSyntax is wrapped by every error of Parse.
var ErrSyntax = errors.New("bad check")

// OutputSchema is the expression of the output-schema check.
const OutputSchema = "output_schema"

// kind of value a check compares with.
type kind uint8

const (
	kString kind = iota + 1
	kNumber
	kBool
	kNull
)

// Check is one compiled check. Immutable; safe for concurrent use.
type Check struct {
	// Expr is the expression as written, runs of spaces made one.
	Expr string

	schema bool   // output_schema
	path   string // gjson path, aliases applied
	isErr  bool   // the is_error alias: a missing isError reads false
	op     string // == != < <= > >= ~
	kind   kind
	str    string
	num    float64
	b      bool
	re     *regexp.Regexp
}

// Parse compiles one check expression. Its errors wrap ErrSyntax and say
// what is wrong and what to write instead.
func Parse(expr string) (*Check, error) {
	e := strings.Join(strings.Fields(expr), " ")
	if e == OutputSchema {
		return &Check{Expr: e, schema: true}, nil
	}
	if e == "" {
		return nil, fmt.Errorf("%w: empty, want PATH OP VALUE (e.g. content.0.text == \"hello\") or output_schema", ErrSyntax)
	}
	i, op := findOp(e)
	if i < 0 {
		return nil, fmt.Errorf("%w %q: no operator, want PATH OP VALUE with OP one of == != < <= > >= ~ (e.g. content.0.text ~ \"^slept\"), or output_schema", ErrSyntax, e)
	}
	path, lit := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+len(op):])
	if path == "" {
		return nil, fmt.Errorf("%w %q: no path before %s (a gjson path such as content.0.text, structured.count, is_error)", ErrSyntax, e, op)
	}
	c := &Check{Expr: e, op: op}
	switch {
	case path == "is_error":
		c.path, c.isErr = "isError", true
	case path == "structured":
		c.path = "structuredContent"
	case strings.HasPrefix(path, "structured."):
		c.path = "structuredContent" + path[len("structured"):]
	default:
		c.path = path
	}
	var v any
	if err := json.Unmarshal([]byte(lit), &v); err != nil || lit == "" {
		return nil, fmt.Errorf("%w %q: value %q is not a JSON literal: write a string in double quotes (\"hello\"), a number, true, false or null", ErrSyntax, e, lit)
	}
	switch x := v.(type) {
	case string:
		c.kind, c.str = kString, x
	case float64:
		c.kind, c.num = kNumber, x
	case bool:
		c.kind, c.b = kBool, x
	case nil:
		c.kind = kNull
	default:
		return nil, fmt.Errorf("%w %q: value %s: want a string, number, true, false or null, not an object or array", ErrSyntax, e, lit)
	}
	switch op {
	case "~":
		if c.kind != kString {
			return nil, fmt.Errorf("%w %q: ~ takes a regular expression in double quotes (\"^slept\"), not %s", ErrSyntax, e, lit)
		}
		re, err := regexp.Compile(c.str)
		if err != nil {
			return nil, fmt.Errorf("%w %q: regular expression: %v", ErrSyntax, e, err)
		}
		c.re = re
	case "<", "<=", ">", ">=":
		if c.kind != kNumber {
			return nil, fmt.Errorf("%w %q: %s compares numbers, not %s", ErrSyntax, e, op, lit)
		}
	}
	if c.isErr && (c.kind != kBool || (op != "==" && op != "!=")) {
		return nil, fmt.Errorf("%w %q: is_error takes == true, == false (or !=)", ErrSyntax, e)
	}
	return c, nil
}

// findOp returns the first operator outside parentheses, brackets and
// double quotes (a gjson query such as #(type=="text") holds some), and
// its index; -1 when none.
func findOp(e string) (int, string) {
	depth, quoted := 0, false
	for i := 0; i < len(e); i++ {
		ch := e[i]
		switch {
		case quoted:
			if ch == '\\' {
				i++
			} else if ch == '"' {
				quoted = false
			}
			continue
		case ch == '"':
			quoted = true
			continue
		case ch == '(' || ch == '[' || ch == '{':
			depth++
			continue
		case ch == ')' || ch == ']' || ch == '}':
			depth--
			continue
		case depth > 0:
			continue
		}
		for _, op := range [...]string{"==", "!=", "<=", ">=", "<", ">", "~"} {
			if strings.HasPrefix(e[i:], op) {
				return i, op
			}
		}
	}
	return -1, ""
}

// IsOutputSchema reports whether c is the output_schema check.
func (c *Check) IsOutputSchema() bool { return c.schema }

// Eval evaluates c (not output_schema) on a result member: ok, or the
// value it saw when not (a copy, shortened: safe to keep). It allocates
// only when the check fails.
func (c *Check) Eval(result []byte) (ok bool, seen string) {
	var r gjson.Result
	if len(result) > 0 {
		r = gjson.Get(unsafe.String(&result[0], len(result)), c.path) // read in place: r is used and dropped here
	}
	if !r.Exists() {
		if c.isErr { // isError absent: false
			r = gjson.Result{Type: gjson.False}
		} else {
			return false, "(missing)"
		}
	}
	if c.test(r) {
		return true, ""
	}
	return false, shorten(r.Raw, r.Type)
}

// test compares r with the check's value.
func (c *Check) test(r gjson.Result) bool {
	switch c.op {
	case "==":
		return c.equal(r)
	case "!=":
		return !c.equal(r)
	case "~":
		if r.Type == gjson.String {
			return c.re.MatchString(r.Str)
		}
		return c.re.MatchString(r.Raw)
	}
	if r.Type != gjson.Number {
		return false
	}
	switch c.op {
	case "<":
		return r.Num < c.num
	case "<=":
		return r.Num <= c.num
	case ">":
		return r.Num > c.num
	}
	return r.Num >= c.num
}

func (c *Check) equal(r gjson.Result) bool {
	switch c.kind {
	case kString:
		return r.Type == gjson.String && r.Str == c.str
	case kNumber:
		return r.Type == gjson.Number && r.Num == c.num
	case kBool:
		return (r.Type == gjson.True && c.b) || (r.Type == gjson.False && !c.b)
	}
	return r.Type == gjson.Null
}

// maxSeen bounds the value a failure keeps (bytes).
const maxSeen = 120

// shorten copies a value seen for a report: its JSON text, at most
// maxSeen bytes, `""` marked empty.
func shorten(raw string, t gjson.Type) string {
	if t == gjson.String && raw == `""` {
		return `"" (empty)`
	}
	if t == gjson.False && raw == "" {
		return "false (absent)"
	}
	if len(raw) > maxSeen {
		cut := maxSeen
		for cut > 0 && raw[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		return strings.Clone(raw[:cut]) + "… (" + strconv.Itoa(len(raw)) + " bytes)"
	}
	return strings.Clone(raw)
}
