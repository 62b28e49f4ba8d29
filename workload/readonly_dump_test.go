package workload

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// dumpPlan writes everything reachable from pl, unexported fields, the
// ops, the renderers and their templates, the correlator and the checks
// included: a plan that reads the same before and after a run was not
// written by it. Pointers are followed once (their address is part of the
// dump, so a field pointed elsewhere shows); a function is its closure's
// address (a Render or Inspect rebound shows). Left out: the HTTP client
// (passed to Compile, shared on purpose) and sync.Pool (a cache the
// collector empties).
func dumpPlan(pl *Plan) string {
	d := &dumper{seen: map[uintptr]bool{}}
	d.value(reflect.ValueOf(pl), "plan")
	return d.b.String()
}

type dumper struct {
	b    strings.Builder
	seen map[uintptr]bool
}

var (
	typeHTTPClient = reflect.TypeFor[http.Client]()
	typePool       = reflect.TypeFor[sync.Pool]()
)

func (d *dumper) line(path string, v any) { fmt.Fprintf(&d.b, "%s = %v\n", path, v) }

func (d *dumper) value(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			d.line(path, "nil")
			return
		}
		p := v.Pointer()
		d.line(path, fmt.Sprintf("%#x", p))
		if d.seen[p] || v.Type().Elem() == typeHTTPClient {
			return
		}
		d.seen[p] = true
		d.value(v.Elem(), path+"*")
	case reflect.Interface:
		if v.IsNil() {
			d.line(path, "nil")
			return
		}
		d.line(path+".(type)", v.Elem().Type())
		d.value(v.Elem(), path+".()")
	case reflect.Struct:
		if v.Type() == typePool {
			return
		}
		for i := range v.NumField() {
			d.value(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		if v.IsNil() {
			d.line(path, "nil")
			return
		}
		d.line(path+".len", v.Len())
		for i := range v.Len() {
			d.value(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Array:
		for i := range v.Len() {
			d.value(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if v.IsNil() {
			d.line(path, "nil")
			return
		}
		type kv struct {
			k string
			v reflect.Value
		}
		var kvs []kv
		for it := v.MapRange(); it.Next(); {
			kd := &dumper{seen: d.seen}
			kd.value(it.Key(), "")
			kvs = append(kvs, kv{kd.b.String(), it.Value()})
		}
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		d.line(path+".len", len(kvs))
		for _, e := range kvs {
			d.value(e.v, path+"["+strings.TrimSpace(strings.ReplaceAll(e.k, "\n", " "))+"]")
		}
	case reflect.Func:
		if v.IsNil() {
			d.line(path, "nil")
			return
		}
		if v.CanAddr() { // the closure, not only its code
			d.line(path, fmt.Sprintf("func %#x", *(*uintptr)(unsafe.Pointer(v.UnsafeAddr()))))
			return
		}
		d.line(path, fmt.Sprintf("func code %#x", v.Pointer()))
	case reflect.Chan, reflect.UnsafePointer:
		d.line(path, fmt.Sprintf("%#x", v.Pointer()))
	case reflect.String:
		d.line(path, fmt.Sprintf("%q", v.String()))
	case reflect.Bool:
		d.line(path, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.line(path, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.line(path, v.Uint())
	case reflect.Float32, reflect.Float64:
		d.line(path, v.Float())
	case reflect.Complex64, reflect.Complex128:
		d.line(path, v.Complex())
	default:
		d.line(path, v.Kind())
	}
}

// diffDumps lists the paths whose values differ between two dumps
// (at most 16).
func diffDumps(a, b string) string {
	parse := func(s string) ([]string, map[string]string) {
		var keys []string
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			k, v, _ := strings.Cut(l, " = ")
			keys = append(keys, k)
			m[k] = v
		}
		return keys, m
	}
	ka, ma := parse(a)
	kb, mb := parse(b)
	var out []string
	for _, k := range ka {
		if v, ok := mb[k]; !ok {
			out = append(out, "- "+k+" = "+ma[k])
		} else if v != ma[k] {
			out = append(out, "~ "+k+" = "+ma[k]+" → "+v)
		}
	}
	for _, k := range kb {
		if _, ok := ma[k]; !ok {
			out = append(out, "+ "+k+" = "+mb[k])
		}
	}
	return strings.Join(out[:min(len(out), 16)], "\n")
}
