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
	err := run(t.Context(), spec, do)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), int(CodeOf(err))
}

func run(ctx context.Context, spec Spec, do func(*Test) error) error {
	tt, err := Prepare(ctx, spec)
	if err != nil {
		return err
	}
	defer tt.Close()
	return do(tt)
}
