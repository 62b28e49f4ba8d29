package workload

// argNotes are the summary's notes on templates that failed during the
// run.
func (pl *Plan) argNotes() []string {
	var out []string
	for _, a := range pl.args {
		if n := a.Note(); n != "" {
			out = append(out, n)
		}
	}
	return out
}
