package launch

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/profile"
)

// testProfile loads the built-in profile name with the overrides kv
// (field, value: a YAML path and a value of the flag's type).
func testProfile(t *testing.T, name string, kv ...any) *profile.Profile {
	t.Helper()
	p, err := profile.LoadProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	override(t, p, kv...)
	return p
}

// toolProfile is the built-in profile name with its op mix one
// tools/call of tool (args, progress: a progressToken), as --tool gives
// it, and the overrides kv.
func toolProfile(t *testing.T, name, tool string, args map[string]any, progress bool, kv ...any) *profile.Profile {
	t.Helper()
	p := testProfile(t, name, kv...)
	one := 1
	p.Ops = []profile.OpSpec{{Method: "tools/call", Tool: tool, Arguments: args, Progress: progress, Weight: &one}}
	p.Name = "tool " + tool
	return p
}

// override applies kv (field, value, …) to p as the flags do.
func override(t *testing.T, p *profile.Profile, kv ...any) {
	t.Helper()
	var ov []profile.Override
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		switch x := v.(type) { // Override takes the flag's variable
		case int:
			v = &x
		case float64:
			v = &x
		case bool:
			v = &x
		case string:
			v = &x
		case time.Duration:
			v = &x
		}
		ov = append(ov, profile.Override{Field: kv[i].(string), Value: v})
	}
	if err := p.Override(ov...); err != nil {
		t.Fatal(err)
	}
}

// testRun prepares spec and runs it with do as the command does
// (launch.Prepare, then Run, Sweep or Soak), in the test's context: its
// stdout, stderr and exit code.
func testRun(t *testing.T, spec Spec, do func(*Test) error) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	spec.Stdout, spec.Stderr = &out, &errb
	spec.Argv = []string{"mcpbench", spec.Command}
	err := prepareAndRun(t.Context(), spec, do)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), int(CodeOf(err))
}

func prepareAndRun(ctx context.Context, spec Spec, do func(*Test) error) error {
	tt, err := Prepare(ctx, spec)
	if err != nil {
		return err
	}
	defer tt.Close()
	return do(tt)
}

// run runs the commands whose library halves launch has, as the command
// does: 'report DIR [--format F]', 'compare A B [--force] [--fail-if X]…'
// and 'plot DIR'; their stdout, stderr (the error, as main prints it)
// and exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	var err error
	flag := func(i int) string {
		if i+1 >= len(args) {
			t.Fatalf("%v: %s without its value", args, args[i])
		}
		return args[i+1]
	}
	switch args[0] {
	case "report":
		format := "text"
		for i := 2; i < len(args); i += 2 {
			if args[i] != "--format" {
				t.Fatalf("%v: flag %s", args, args[i])
			}
			format = flag(i)
		}
		err = Report(&out, args[1], format, true, "")
	case "compare":
		c := Compare{A: args[1], B: args[2], Stdout: &out, Stderr: &errb}
		for i := 3; i < len(args); i++ {
			switch args[i] {
			case "--force":
				c.Force = true
			case "--fail-if":
				c.FailIf = append(c.FailIf, flag(i))
				i++
			default:
				t.Fatalf("%v: flag %s", args, args[i])
			}
		}
		err = c.Run()
	case "plot":
		if len(args) != 2 {
			t.Fatalf("%v: plot DIR only", args)
		}
		err = Plot(args[1], "both", "", "", false, &out) // plot's default --format
	default:
		t.Fatalf("run %v: report, compare or plot only", args)
	}
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), int(CodeOf(err))
}
