package argtmpl

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"

	"github.com/mcpbench/mcpbench/driver"
)

// Data-driven arguments. A string anywhere in an op's arguments that
// holds "{{" is a text/template, rendered for every request:
//
//	{{rand_int A B}}    an integer in [A, B], both included
//	{{rand_string N}}   N characters of [A-Za-z0-9]
//	{{uuid}}            a random (version 4) UUID
//	{{seq}}             1, 2, 3 … : the op's requests across the run (all VUs)
//	{{vu}}              the VU's number, from 1 (k6's __VU)
//	{{iteration}}       the VU's ops before this one, from 0 (k6's __ITER):
//	                    an iteration is one op of the mix
//	{{.column}}         the column of the request's row of the data file
//
// The rest of text/template works too (printf, pipelines, if, index …).
// Random values come from a stream seeded by the profile's seed, the op,
// the VU and its iteration: the same seed gives the same arguments for the
// same VU and iteration. A value that is exactly one {{rand_int}}, {{seq}},
// {{vu}} or {{iteration}} is sent as a JSON number; exactly one {{.column}}
// is sent as the row's value (a string from CSV; the value as written,
// of any JSON type, from JSONL); anything else is a JSON string. Prompt
// arguments are always strings. A literal "{{" is written {{"{{"}}.
//
// Templates are parsed once, when the plan is compiled. The common forms
// above — text around actions of these functions with constant arguments
// and {{.column}} — compile to a program that renders without reflection
// and without allocating; other templates are executed by text/template
// (slower, and allocating). Every template is executed once at compile
// time against every row of its data file (up to maxDryRows), so a
// template that fails is a profile error; one that still fails during
// the run (on a random draw that the dry run did not meet) sends what it
// wrote before the error, and the summary notes how many requests did.

// Names of the template functions.
const (
	fnRandInt    = "rand_int"
	fnRandString = "rand_string"
	fnUUID       = "uuid"
	fnSeq        = "seq"
	fnVU         = "vu"
	fnIteration  = "iteration"
	fnStep       = "step" // an earlier step's value (correlate.go)
	fnEnv        = "env"  // a value given with -e KEY=VALUE (correlate.go)
)

// maxRandString bounds {{rand_string N}}.
const maxRandString = 1 << 20

// maxDryRows bounds the rows a full template is tried on at compile time.
const maxDryRows = 100_000

// stepKind is what one step of a rendering program appends.
type stepKind uint8

const (
	stepLit        stepKind = iota // lit, as is
	stepSeq                        // {{seq}}
	stepVU                         // {{vu}}
	stepIteration                  // {{iteration}}
	stepRandInt                    // {{rand_int a b}}
	stepRandString                 // {{rand_string a}}
	stepUUID                       // {{uuid}}
	stepCellInner                  // {{.column}} inside a string
	stepCellWhole                  // {{.column}} as the whole value
	stepTemplate                   // a full text/template, inside a string
	stepRefInner                   // {{step "name" "path"}} inside a string (correlate.go)
	stepRefWhole                   // {{step "name" "path"}} as the whole value
)

// step is one instruction of a rendering program.
type step struct {
	kind stepKind
	lit  []byte
	a, b int64 // rand_int bounds; rand_string length
	col  int   // data column
	tmpl int   // index in Op.tmpls
	ref  int   // index in Op.refs
}

// Op renders the params of one templated op: a program of steps
// whose literal parts are the params' fixed JSON.
type Op struct {
	field  string // "ops[i].arguments", for notes
	steps  []step
	seed   uint64
	data   *Data // nil: no data file
	seq    atomic.Int64
	seg    Slotter              // the run's execution segment; nil: the whole test
	tmpls  []*template.Template // full templates, parsed once; executed through pool clones
	fields []string             // field of each full template
	pool   sync.Pool            // *execState, when tmpls is not empty

	failed   atomic.Int64                 // requests whose full template failed at run time
	firstErr atomic.Pointer[failedRender] // the first failure

	refs    []Ref             // the {{step}} values the op reads (correlate.go)
	dynName bool              // the tool, prompt or uri is a template
	env     map[string]string // the -e values (Profile.Env), for {{env "KEY"}}
}

type failedRender struct {
	field string
	err   error
}

// renderState is the state of one request's rendering.
type renderState struct {
	c     driver.RenderContext
	rng   rngState
	seq   int64 // 0 until {{seq}} is first used
	row   []dataCell
	rowAt int
	dry   bool       // a compile-time trial: takes no seq and no row of the run
	vals  []Captured // the VU's Captured values ({{step}}; correlate.go)
	bind  []int      // slot in vals of each of the op's refs
}

// Render appends the op's params for the request c (driver.Op.Render).
// Safe for concurrent use.
func (a *Op) Render(dst []byte, c driver.RenderContext) []byte {
	return a.render(dst, c, nil, nil)
}

// render is Render with the VU's Captured values and the op's slots in
// them (both nil without {{step}}).
func (a *Op) render(dst []byte, c driver.RenderContext, vals []Captured, bind []int) []byte {
	if len(a.tmpls) == 0 {
		var st renderState
		a.begin(&st, c)
		st.vals, st.bind = vals, bind
		return a.emit(dst, &st, nil)
	}
	x := a.pool.Get().(*execState)
	x.st = renderState{vals: vals, bind: bind}
	a.begin(&x.st, c)
	dst = a.emit(dst, &x.st, x)
	a.pool.Put(x)
	return dst
}

// begin seeds st for request c and picks its row.
func (a *Op) begin(st *renderState, c driver.RenderContext) {
	st.c = c
	st.rng.seed(a.seed, mix64(mix64(uint64(c.VU))+uint64(c.Iteration)))
	if a.data != nil && !st.dry {
		st.rowAt = a.data.pick(&st.rng)
		st.row = a.data.rows[st.rowAt]
	}
}

// seqOf returns the request's {{seq}}, taking it on first use.
func (a *Op) seqOf(st *renderState) int64 {
	if st.seq == 0 {
		if st.dry {
			st.seq = 1
		} else {
			st.seq = int64(slot(a.seg, uint64(a.seq.Add(1)-1))) + 1 // a segment's share of 1, 2, 3 …
		}
	}
	return st.seq
}

// emit runs the program; x (nil without full templates) executes them.
func (a *Op) emit(dst []byte, st *renderState, x *execState) []byte {
	for i := range a.steps {
		s := &a.steps[i]
		switch s.kind {
		case stepLit:
			dst = append(dst, s.lit...)
		case stepSeq:
			dst = strconv.AppendInt(dst, a.seqOf(st), 10)
		case stepVU:
			dst = strconv.AppendInt(dst, int64(st.c.VU)+1, 10)
		case stepIteration:
			dst = strconv.AppendInt(dst, st.c.Iteration, 10)
		case stepRandInt:
			dst = strconv.AppendInt(dst, st.rng.between(s.a, s.b), 10)
		case stepRandString:
			dst = st.rng.appendString(dst, int(s.a))
		case stepUUID:
			dst = st.rng.appendUUID(dst)
		case stepCellInner:
			dst = append(dst, st.row[s.col].inner...)
		case stepCellWhole:
			dst = append(dst, st.row[s.col].whole...)
		case stepTemplate:
			dst = a.execute(dst, s.tmpl, x)
		case stepRefInner:
			dst = appendRef(dst, st, s.ref, false)
		case stepRefWhole:
			dst = appendRef(dst, st, s.ref, true)
		}
	}
	return dst
}

// execute runs full template i and appends its output JSON-escaped.
func (a *Op) execute(dst []byte, i int, x *execState) []byte {
	x.buf = x.buf[:0]
	var data any
	if a.data != nil {
		data = a.data.rowData(x.st.rowAt)
	}
	err := x.tmpls[i].Execute((*sliceWriter)(&x.buf), data)
	if err != nil {
		if x.st.dry {
			x.err = err
		} else if a.failed.Add(1) == 1 {
			a.firstErr.Store(&failedRender{a.fields[i], err})
		}
	}
	return appendEscaped(dst, x.buf)
}

// Slotter maps the j-th number (from 0) of a run-wide counter to the
// number this process takes: an execution segment's share. nil: every
// number.
type Slotter interface{ Slot(j uint64) uint64 }

func slot(s Slotter, j uint64) uint64 {
	if s == nil {
		return j
	}
	return s.Slot(j)
}

// SetSegment makes the op's run-wide counters ({{seq}}, its data file's
// sequential rows) take seg's share of their numbers (nil: all). Call it
// before the op renders, not during.
func (a *Op) SetSegment(seg Slotter) {
	a.seg = seg
	if a.data != nil {
		a.data.seg = seg
	}
}

// Refs are the {{step}} values the op reads, in order of first use.
func (a *Op) Refs() []Ref { return a.refs }

// DynName reports whether the op's tool, prompt or uri is a template.
func (a *Op) DynName() bool { return a.dynName }

// RenderValues is Render with a VU's captured values and the slot in
// vals of each of Refs (both nil without {{step}}). Safe for concurrent
// use.
func (a *Op) RenderValues(dst []byte, c driver.RenderContext, vals []Captured, bind []int) []byte {
	return a.render(dst, c, vals, bind)
}

// Note describes the run-time template failures ("" when none).
func (a *Op) Note() string {
	n := a.failed.Load()
	f := a.firstErr.Load()
	if n == 0 || f == nil {
		return ""
	}
	return fmt.Sprintf("%s: %d requests sent a value cut where its template failed (first: %s)", f.field, n, tidyTemplate(f.field, f.err))
}

// templateError words a text/template error of field ("template: F:1:7:
// executing \"F\" at <.x>: …") as "F<where>: template 1:7: at <.x>: …".
func templateError(field, where string, err error) error {
	return fmt.Errorf("%s%s: %s", field, where, tidyTemplate(field, err))
}

// tidyTemplate is templateError's message without the field.
func tidyTemplate(field string, err error) string {
	m := strings.TrimPrefix(err.Error(), "template: "+field+":")
	return "template " + strings.Replace(m, "executing \""+field+"\" at ", "at ", 1)
}

// sliceWriter appends to a byte slice.
type sliceWriter []byte

func (w *sliceWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// execState executes an op's full templates: clones whose functions read
// st, and a buffer. One per concurrent rendering (pooled).
type execState struct {
	st    renderState
	a     *Op
	tmpls []*template.Template
	buf   []byte
	err   error // of a dry run
}

func (a *Op) newExecState() *execState {
	x := &execState{a: a, tmpls: make([]*template.Template, len(a.tmpls))}
	funcs := template.FuncMap{
		fnRandInt:    func(lo, hi int64) int64 { return x.st.rng.between(min(lo, hi), max(lo, hi)) },
		fnRandString: func(n int) string { return string(x.st.rng.appendString(nil, min(max(n, 0), maxRandString))) },
		fnUUID:       func() string { return string(x.st.rng.appendUUID(nil)) },
		fnSeq:        func() int64 { return a.seqOf(&x.st) },
		fnVU:         func() int { return x.st.c.VU + 1 },
		fnIteration:  func() int64 { return x.st.c.Iteration },
	}
	for i, t := range a.tmpls {
		c, err := t.Clone() // the parse tree is shared; never executed itself
		if err != nil {
			panic(err) // only a template already executed fails to clone
		}
		x.tmpls[i] = c.Funcs(funcs)
	}
	return x
}

// parseFuncs are the template functions as the parser sees them (names
// and signatures); execution binds each clone's own (newExecState).
var parseFuncs = template.FuncMap{
	fnRandInt:    func(lo, hi int64) int64 { return 0 },
	fnRandString: func(n int) string { return "" },
	fnUUID:       func() string { return "" },
	fnSeq:        func() int64 { return 0 },
	fnVU:         func() int { return 0 },
	fnIteration:  func() int64 { return 0 },
	fnStep:       func(name, path string) string { return "" }, // simple form only (simpleAction)
	fnEnv:        func(key string) string { return "" },        // simple form only
}

// argCompiler builds one op's program.
type argCompiler struct {
	a       *Op
	strs    bool // prompt arguments: every value a string
	hasData bool
	errs    []error
}

// Source is what of an op its templates may be in: its method, its tool,
// prompt or uri, and its arguments (JSON values: maps, slices, strings,
// numbers, bools, nil), as written in the profile or with ${NAME}
// expanded.
type Source struct {
	Method            string
	Tool, Prompt, URI string
	Arguments         any
}

// CompileOp compiles the arguments of op i (written: as in the profile,
// which decides what is a template; o: expanded, what is sent) into its
// renderer: seed is the profile's seed, env the -e values ({{env}}), src
// its data file (nil: none). It returns nil without errors when no
// argument is a template, and every problem otherwise, each naming its
// field (ops[i].arguments…).
func CompileOp(i int, written, o Source, seed int64, env map[string]string, src *Data) (*Op, []error) {
	// The name (tool, prompt) or uri may be a template too (an earlier
	// step's value: correlate.go); it is always a string.
	nameField, written1, name := ".tool", written.Tool, o.Tool
	switch o.Method {
	case "prompts/get":
		nameField, written1, name = ".prompt", written.Prompt, o.Prompt
	case "resources/read":
		nameField, written1, name = ".uri", written.URI, o.URI
	}
	dynName := strings.Contains(written1, "{{")
	if !hasTemplate(written.Arguments) && !dynName {
		return nil, nil
	}
	f := "ops[" + strconv.Itoa(i) + "]"
	field := f + ".arguments"
	a := &Op{field: field, data: src, seed: mix64(uint64(seed)) ^ mix64(uint64(i)+0x51), env: env}
	c := &argCompiler{a: a, strs: o.Method == "prompts/get", hasData: src != nil}
	a.dynName = dynName
	if o.Method == "resources/read" {
		c.strs = true
		c.lit(`{"uri":`)
		c.value(f+nameField, written1, name)
		c.lit(`}`)
	} else {
		c.lit(`{"arguments":`)
		c.value(field, written.Arguments, o.Arguments)
		c.lit(`,"name":`)
		strs := c.strs
		c.strs = true
		c.value(f+nameField, written1, name)
		c.strs = strs
		c.lit(`}`)
	}
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	if len(a.tmpls) > 0 {
		a.pool.New = func() any { return a.newExecState() }
		c.errs = a.dryRun()
	}
	return a, c.errs
}

// hasTemplate reports whether a string inside v holds "{{".
func hasTemplate(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, "{{")
	case map[string]any:
		for _, x := range v {
			if hasTemplate(x) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, hasTemplate)
	}
	return false
}

// lit appends fixed JSON to the program.
func (c *argCompiler) lit(s string) {
	st := c.a.steps
	if n := len(st); n > 0 && st[n-1].kind == stepLit {
		st[n-1].lit = append(st[n-1].lit, s...)
		return
	}
	c.a.steps = append(st, step{kind: stepLit, lit: []byte(s)})
}

// value compiles one value: written decides what is a template, v (its
// ${NAME}-expanded twin) is what is sent.
func (c *argCompiler) value(field string, written, v any) {
	switch v := v.(type) {
	case map[string]any:
		w, _ := written.(map[string]any)
		c.lit("{")
		for j, k := range slices.Sorted(maps.Keys(v)) {
			if j > 0 {
				c.lit(",")
			}
			c.lit(string(appendEscapedString(nil, k)) + ":")
			c.value(field+"."+k, w[k], v[k])
		}
		c.lit("}")
	case []any:
		w, _ := written.([]any)
		c.lit("[")
		for j, x := range v {
			if j > 0 {
				c.lit(",")
			}
			var wx any
			if j < len(w) {
				wx = w[j]
			}
			c.value(field+"["+strconv.Itoa(j)+"]", wx, x)
		}
		c.lit("]")
	case string:
		if ws, ok := written.(string); ok && strings.Contains(ws, "{{") {
			c.template(field, v)
			return
		}
		c.lit(string(appendEscapedString(nil, v)))
	case nil:
		c.lit("null")
	default:
		if c.strs {
			c.lit(string(appendEscapedString(nil, fmt.Sprint(v)))) // prompt arguments are strings
			return
		}
		c.literalJSON(field, v)
	}
}

// errNoData is a {{.column}} without a data file.
var errNoData = errors.New("needs a data file: set data: on the op or the profile")

// template compiles the template text of field.
func (c *argCompiler) template(field, text string) {
	t, err := template.New(field).Funcs(parseFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		c.errs = append(c.errs, templateError(field, "", err))
		return
	}
	if err := c.checkFields(field, t.Tree.Root, true); err != nil {
		c.errs = append(c.errs, err)
		return
	}
	nodes := t.Tree.Root.Nodes
	prog, ok := c.simple(field, nodes)
	if len(c.errs) > 0 {
		return
	}
	if !ok && usesFunc(t.Tree.Root, fnStep, fnEnv) {
		c.errs = append(c.errs, fmt.Errorf(`%s: {{step}} and {{env}} work as actions of their own with quoted arguments ({{step "list" "tools.0.name"}}, {{env "KEY"}}), not inside pipelines or blocks`, field))
		return
	}
	if ok && len(prog) == 1 && !c.strs {
		switch prog[0].kind {
		case stepSeq, stepVU, stepIteration, stepRandInt, stepCellWhole, stepRefWhole:
			c.a.steps = append(c.a.steps, prog[0]) // a JSON number, or the row's value
			return
		}
	}
	c.lit(`"`)
	if ok {
		for _, s := range prog {
			if s.kind == stepCellWhole {
				s.kind = stepCellInner
			}
			if s.kind == stepRefWhole {
				s.kind = stepRefInner
			}
			if s.kind == stepLit {
				c.lit(string(s.lit))
			} else {
				c.a.steps = append(c.a.steps, s)
			}
		}
	} else {
		c.a.steps = append(c.a.steps, step{kind: stepTemplate, tmpl: len(c.a.tmpls)})
		c.a.tmpls = append(c.a.tmpls, t)
		c.a.fields = append(c.a.fields, field)
	}
	c.lit(`"`)
}
