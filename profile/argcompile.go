package profile

import (
	"fmt"

	"github.com/mcpbench/mcpbench/argtmpl"
)

// The profile's side of argument templates (package argtmpl): each op's
// inputs, its data file, and the notes of the run.

// compileArgs compiles the argument templates of every op of p (ops are
// p's ops with ${NAME} expanded): out[i] is nil for an op without
// templates. Every problem is returned, naming its field.
func (p *Profile) compileArgs(ops []OpSpec) ([]*argtmpl.Op, []error) {
	data, errs := p.loadedData()
	out := make([]*argtmpl.Op, len(ops))
	for i := range ops {
		src := data[i+1]
		if src == nil {
			src = data[0]
		}
		if p.Ops[i].Data != nil && data[i+1] == nil || p.Data != nil && data[0] == nil {
			continue // its data file failed: reported
		}
		if m := ops[i].Method; m != "tools/call" && m != "prompts/get" && m != "resources/read" {
			continue // validateOps refuses arguments here
		}
		a, opErrs := argtmpl.CompileOp(i, p.Ops[i].source(), ops[i].source(), p.Seed, p.envx, src)
		errs = append(errs, opErrs...)
		if len(opErrs) == 0 {
			out[i] = a
		}
	}
	return out, errs
}

// loadedData loads each data file of p once: the profile's and the ops'
// (index i of ops in out[i+1]; out[0] the profile's), with errors naming
// the field.
func (p *Profile) loadedData() ([]*argtmpl.Data, []error) {
	out := make([]*argtmpl.Data, len(p.Ops)+1)
	var errs []error
	load := func(i int, field string, spec *argtmpl.DataSpec) {
		if spec == nil {
			return
		}
		d, err := argtmpl.LoadData(spec, p.dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.%w", field, err)) // "ops[1].data.file: ..."
			return
		}
		out[i] = d
	}
	load(0, "data", p.Data)
	for i := range p.Ops {
		load(i+1, fmt.Sprintf("ops[%d].data", i), p.Ops[i].Data)
	}
	return out, errs
}

// source is what of o its templates may be in (argtmpl.CompileOp).
func (o *OpSpec) source() argtmpl.Source {
	return argtmpl.Source{Method: o.Method, Tool: o.Tool, Prompt: o.Prompt, URI: o.URI, Arguments: o.Arguments}
}
