package procrun

import (
	"maps"
	"sort"

	"github.com/spf13/pflag"
)

// SegmentArgs rebuilds the flags the user gave (those fs visited), as
// one "--name=value" argument each (a repeatable flag once per value),
// leaving out those in drop: the command line of a segment of the same
// test (Launch.Args; the pods of k8s-job), which adds its own --segment,
// --start-at and --out. The order is the flags' names', so the same flags
// give the same arguments.
func SegmentArgs(fs *pflag.FlagSet, drop map[string]bool) []string {
	var names []string
	fs.Visit(func(f *pflag.Flag) {
		if !drop[f.Name] {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	var out []string
	for _, n := range names {
		f := fs.Lookup(n)
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+n+"="+v)
			}
			continue
		}
		out = append(out, "--"+n+"="+f.Value.String())
	}
	return out
}

// ScaleDrop are run's flags a segment's command line sets itself or does
// not take: the segment, its start and results directory, the parent's
// processes and output. Read-only.
var ScaleDrop = map[string]bool{
	"segment": true, "segment-sequence": true, "start-at": true, "start-delay": true, "processes": true,
	"out": true, "no-results": true, "quiet": true, "no-progress": true, "json": true, "format": true, "dry-run": true, "cpuprofile": true,
}

// ProcessDrop are the flags the children of a launch do not get: those a
// segment's command line sets itself (ScaleDrop), the target process (the
// first child alone samples it: Launch.TargetPID), and the live outputs
// (one address, one file: the parent serves them from the merged run).
// Read-only.
var ProcessDrop = func() map[string]bool {
	m := maps.Clone(ScaleDrop)
	for _, n := range []string{"target-pid", "prometheus", "prometheus-linger", "prometheus-rw", "out-jsonl", "junit", "dashboard", "dashboard-linger"} {
		m[n] = true
	}
	return m
}()
