package workload

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/tidwall/gjson"
)

// The run side of correlation (correlate.go): the values a VU's steps
// keep, the check before a step that reads them, the error of one missing.

// inspector keeps the values caps ask for from a result of their step.
// It runs on the VU's goroutine (Op.Inspect) and allocates only while a
// value outgrows its buffer.
func (c *correlator) inspector(caps []capture) func([]byte, *driver.Result) {
	return func(result []byte, res *driver.Result) {
		vv := c.of(res.VU)
		if vv == nil || len(result) == 0 {
			return
		}
		vals := vv.vals
		js := unsafe.String(&result[0], len(result)) // read here only, not kept
		for _, cp := range caps {
			v := &vals[cp.slot]
			if v.OK {
				continue // an earlier page had it
			}
			if r := gjson.Get(js, cp.path); r.Exists() {
				v.Raw = append(v.Raw[:0], r.Raw...)
				v.OK = true
			}
		}
	}
}

// start clears the values of a run (nil: no correlation).
func (c *correlator) start() {
	if c != nil {
		c.vus.Store(nil)
	}
}

// forVU makes VU id's values (nil without correlation). Called once per
// VU, before its first op.
func (c *correlator) forVU(id int) *vuValues {
	if c == nil {
		return nil
	}
	v := &vuValues{vals: make([]argtmpl.Captured, c.slots)}
	c.grow.Lock()
	defer c.grow.Unlock()
	var t []*vuValues
	if p := c.vus.Load(); p != nil {
		t = *p
	}
	if id >= len(t) {
		n := make([]*vuValues, max(2*len(t), id+1, 64))
		copy(n, t)
		t = n
	}
	t[id] = v // each entry is written once, before its VU's first op
	c.vus.Store(&t)
	return v
}

// of returns VU id's values (nil: none): a load, no lock.
func (c *correlator) of(id int) *vuValues {
	if p := c.vus.Load(); p != nil && id >= 0 && id < len(*p) {
		return (*p)[id]
	}
	return nil
}

// before prepares the step of plan op op for VU v: its values are
// cleared (the step about to run sets them), and the error of a value it
// reads that is missing is returned (nil: none).
func (c *correlator) before(v *vuValues, op int) error {
	if c == nil || v == nil {
		return nil
	}
	var err error
	if b := c.deps[op]; b != nil {
		for i, slot := range b.slots {
			if x := &v.vals[slot]; !x.OK {
				err = missing(b.refs[i], x)
				break
			}
		}
	}
	for _, cp := range c.caps[op] {
		v.vals[cp.slot] = argtmpl.Captured{Raw: v.vals[cp.slot].Raw[:0]}
	}
	return err
}

// after marks the values of the step of plan op op failed when its
// request did (class: the failure).
func (c *correlator) after(v *vuValues, op int, class driver.Class) {
	if c == nil || v == nil || class == driver.ClassOK {
		return
	}
	for _, cp := range c.caps[op] {
		x := &v.vals[cp.slot]
		x.OK, x.Fail = false, class
	}
}

// MissingValueError is the error of a request not sent because a value
// it reads from an earlier step is missing (driver.ClassMissingValue).
type MissingValueError struct {
	Field string // the template's field (ops[1].tool)
	Ref   string // {{step "list" "tools.0.name"}}
	Step  string // the step read
	Path  string
	// Failed is the class of the step's failure; ClassOK when it
	// succeeded without the path.
	Failed driver.Class
}

func (e *MissingValueError) Error() string {
	if e.Failed != driver.ClassOK {
		return fmt.Sprintf("%s: %s: not sent: step %q failed (%s)", e.Field, e.Ref, e.Step, e.Failed)
	}
	return fmt.Sprintf("%s: %s: not sent: the result of step %q has no %s", e.Field, e.Ref, e.Step, e.Path)
}

// Unwrap returns driver.ErrMissingValue.
func (e *MissingValueError) Unwrap() error { return driver.ErrMissingValue }

func missing(r argtmpl.Ref, x *argtmpl.Captured) error {
	return &MissingValueError{Field: r.Field, Ref: r.String(), Step: r.Step, Path: r.Path, Failed: x.Fail}
}

// failMissing fills res as a request of the plan op that was not sent:
// err (a *MissingValueError), class missing-value, timed now.
func failMissing(res *driver.Result, err error) {
	now := time.Now()
	res.Start, res.End = now, now
	res.Err, res.Class = err, driver.ClassMissingValue
}
