package argtmpl

// Run is one run's state of a plan's templated ops: the run-wide
// counters ({{seq}}, each data file's sequential cursor), the execution
// segment they take their share of, and the run-time template failures
// (Note). An Op that CompileOp returns keeps counters of its own
// (rendering it advances them; its compile-time dry run takes no number
// and no row); a run that must leave it as it is, and start afresh,
// renders copies made by Run.Op: a plan's ops are then read-only, and a
// second run of the same plan starts its {{seq}} and rows where the first
// did (workload's engine makes one Run per run).
//
// A Run is not safe for concurrent use while copies are made; the copies
// render concurrently (as Op.Render).
type Run struct {
	seg  Slotter
	ops  map[*Op]*Op
	data map[*Data]*Data // one cursor per data file, shared by its ops as in the plan
}

// NewRun returns the state of a run that takes seg's share of the
// run-wide numbers (nil: every number; the whole test).
func NewRun(seg Slotter) *Run {
	return &Run{seg: seg, ops: map[*Op]*Op{}, data: map[*Data]*Data{}}
}

// Op returns the run's copy of a (nil for nil; the same copy for the same
// a): its program, templates and data rows are a's (read-only), its
// counters start from the first number, and it renders with the run's
// segment.
func (r *Run) Op(a *Op) *Op {
	if a == nil {
		return nil
	}
	if c := r.ops[a]; c != nil {
		return c
	}
	c := &Op{
		field: a.field, steps: a.steps, seed: a.seed, data: r.dataOf(a.data), seg: r.seg,
		tmpls: a.tmpls, fields: a.fields, refs: a.refs, dynName: a.dynName, env: a.env,
	}
	if len(c.tmpls) > 0 {
		c.pool.New = func() any { return c.newExecState() }
	}
	r.ops[a] = c
	return c
}

// dataOf is the run's copy of data file d (nil for nil): its rows, a
// cursor of its own.
func (r *Run) dataOf(d *Data) *Data {
	if d == nil {
		return nil
	}
	if c := r.data[d]; c != nil {
		return c
	}
	c := &Data{file: d.file, random: d.random, columns: d.columns, rows: d.rows, seg: r.seg, any: d.any}
	r.data[d] = c
	return c
}
