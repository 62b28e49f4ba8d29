package driver

import (
	"reflect"
	"testing"
	"time"
)

// Clone copies every field of an Op but what a run learns (fastest): a
// field added to Op and not to Clone fails here.
func TestOpCloneCopiesEveryField(t *testing.T) {
	op, err := NewOp("call", "tools/call", []byte(`{"name":"echo","arguments":{"id":"${request}"}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	op.ExpectProgress, op.ParamHeaders, op.Changes, op.MaxPages = 3, [][2]string{{"Mcp-Param-A", "1"}}, "test://r", 7
	op.Render = func(dst []byte, c RenderContext) []byte { return dst }
	op.Inspect = func([]byte, *Result) {}
	op.Cancel = &Cancel{After: time.Millisecond, P: 1}
	op.subURI, op.list = "test://s", true
	op.fastest.Store(42)
	c := op.Clone()
	if c.fastest.Load() != 0 {
		t.Errorf("the clone's fastest answer: %d, want 0 (afresh)", c.fastest.Load())
	}
	ov, cv := reflect.ValueOf(op).Elem(), reflect.ValueOf(c).Elem()
	for i := range ov.NumField() {
		f := ov.Type().Field(i)
		if f.Name == "fastest" {
			continue
		}
		a, b := ov.Field(i), cv.Field(i)
		if a.IsZero() {
			t.Errorf("field %s is zero in the test's op: set it, so Clone is checked to copy it", f.Name)
			continue
		}
		if a.Kind() == reflect.Func {
			if a.Pointer() != b.Pointer() {
				t.Errorf("Clone: field %s not copied", f.Name)
			}
			continue
		}
		if !reflect.DeepEqual(reflectField(a), reflectField(b)) {
			t.Errorf("Clone: field %s = %v, want %v", f.Name, reflectField(b), reflectField(a))
		}
	}
}

// reflectField reads a field, exported or not, as a comparable dump.
func reflectField(v reflect.Value) any {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int64:
		return v.Int()
	case reflect.Pointer:
		return v.Pointer()
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = reflectField(v.Index(i))
		}
		return out
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = reflectField(v.Index(i))
		}
		return out
	case reflect.Uint8:
		return v.Uint()
	}
	return v.Kind().String()
}
