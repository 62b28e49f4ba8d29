package procrun

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

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

// How a child gets the user's flags without showing them: a process's
// argv is world-readable (/proc/PID/cmdline, ps), its environment is not
// (/proc/PID/environ is readable by its user and root alone). The flags
// of a child's command line (--header values, --url with user:password@
// or ?api_key=, --proxy, -e values: the user's secrets as typed) go in
// its environment, FlagsEnv=N and FlagsEnv_0 … FlagsEnv_N−1 one flag
// each, and its argv is only the subcommand, FlagsFromEnv, and what
// Launch adds (--segment, --start-at, --out, --no-progress,
// --target-pid: never secret).
const (
	// FlagsFromEnv, right after the subcommand, says the flags are in the
	// environment (ExpandFlagsFromEnv); a hidden argument of mcpbench's
	// own children, never typed.
	FlagsFromEnv = "--flags-from-env"
	// FlagsEnv is the variable holding the number of flags; FlagsEnv_I
	// holds flag I.
	FlagsEnv = "MCPBENCH_CHILD_FLAGS"
)

// HideArgs splits a child's command line args (the subcommand, then its
// flags: what SegmentArgs builds) into the argv it is started with, the
// subcommand and FlagsFromEnv, and its environment: environ (os.Environ:
// the parent's) without any FlagsEnv variables of its own, plus FlagsEnv
// and one variable per flag, in order. args of one element (no flags)
// are returned as they are, with environ. A flag can be as long as an
// argument could (Linux: 128 KiB each).
func HideArgs(args, environ []string) (argv, env []string) {
	if len(args) < 2 {
		return args, environ
	}
	env = make([]string, 0, len(environ)+len(args))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, FlagsEnv+"=") && !strings.HasPrefix(kv, FlagsEnv+"_") {
			env = append(env, kv)
		}
	}
	flags := args[1:]
	env = append(env, FlagsEnv+"="+strconv.Itoa(len(flags)))
	for i, f := range flags {
		env = append(env, FlagsEnv+"_"+strconv.Itoa(i)+"="+f)
	}
	return []string{args[0], FlagsFromEnv}, env
}

// ExpandFlagsFromEnv is the child's side of HideArgs: args (os.Args[1:])
// whose second element is FlagsFromEnv get the flags read through lookup
// (os.LookupEnv) in its place, in order; other args are returned as they
// are. names are the variables read (to unset). The error, for a
// FlagsFromEnv without its variables, names them, never a value.
func ExpandFlagsFromEnv(args []string, lookup func(string) (string, bool)) (out, names []string, err error) {
	if len(args) < 2 || args[1] != FlagsFromEnv {
		return args, nil, nil
	}
	v, ok := lookup(FlagsEnv)
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n < 0 {
		return nil, nil, fmt.Errorf("%s: $%s is not set to a count: this argument is how mcpbench passes the flags to its own --processes children; do not give it", FlagsFromEnv, FlagsEnv)
	}
	out = append(make([]string, 0, len(args)-1+n), args[0])
	names = []string{FlagsEnv}
	for i := range n {
		name := FlagsEnv + "_" + strconv.Itoa(i)
		f, ok := lookup(name)
		if !ok {
			return nil, nil, fmt.Errorf("%s: $%s is not set (of the %d flags in $%s)", FlagsFromEnv, name, n, FlagsEnv)
		}
		out = append(out, f)
		names = append(names, name)
	}
	return append(out, args[2:]...), names, nil
}
