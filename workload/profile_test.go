package workload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/profiles"
)

func TestBuiltinProfilesAreValid(t *testing.T) {
	for _, name := range profiles.Names() {
		p, err := profile.LoadProfile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := Compile(p, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if p.Name != name {
			t.Errorf("%s: name field %q", name, p.Name)
		}
	}
	for _, want := range []string{"smoke", "tools-mix", "streaming"} {
		if _, err := profiles.Read(want); err != nil {
			t.Errorf("built-in %s missing", want)
		}
	}
}

// Every mistake is reported at once, each naming its field.
func TestProfileReportsEveryMistake(t *testing.T) {
	yaml := `name: bad
vus: -2
duration: 10 parsecs
ops:
  - method: tools/cal
    tool: echo
`
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte(yaml), 0o644)
	p, err := profile.LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(p, nil)
	var pe *profile.ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ProfileError", err)
	}
	var got []string
	for _, e := range pe.Errs {
		got = append(got, e.Error())
	}
	want := []string{
		`duration (line 3): "10 parsecs" is not a duration (want e.g. 10s, 250ms)`,
		`vus: -2, want at least 1`,
		`ops[0].method: "tools/cal", want one of tools/call, tools/list, resources/list, resources/read, resources/templates/list, resources/subscribe, resources/unsubscribe, prompts/list, prompts/get, completion/complete, logging/setLevel, ping`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "3 problems") {
		t.Fatalf("message %q", err)
	}
}

func TestProfileYAMLMistakes(t *testing.T) {
	tests := []struct {
		yaml string
		want []string
	}{
		{"vuz: 3\nops: [{method: ping}]", []string{`vuz (line 1): unknown field "vuz"`}},
		{"vus: many\nops: [{method: ping}]", []string{`vus (line 1): "many" is not an integer`}},
		{"get_stream: maybe\nops: [{method: ping}]", []string{`get_stream (line 1): "maybe" is not true or false`}},
		{"ops:\n  - method: ping\n    weight: heavy", []string{`ops[0].weight (line 3): "heavy" is not an integer`}},
		{"ops:\n  - method: tools/call\n  - method: prompts/get\n  - method: resources/read\n  - method: ping\n    arguments: {a: 1}\n    weight: -1",
			[]string{"ops[0].tool: required for tools/call", "ops[1].prompt: required for prompts/get", "ops[2].uri: required for resources/read",
				"ops[3].arguments: only tools/call, prompts/get and completion/complete take arguments", "ops[3].weight: -1, want ≥ 0"}},
		{"url: ftp://x\nops: [{method: ping, weight: 0}]", []string{`url: scheme "ftp", want http or https`, "ops: all weights are 0"}},
		{"rate: 10\nvus: 5\nmax_vus: 2\nops: [{method: ping}]", []string{"max_vus: 2 is below vus (5)"}},
		{"resume: {policy: sometimes}\nops: [{method: ping}]", []string{`resume.policy: "sometimes", want honour-retry, immediate or backoff`}},
	}
	for _, tt := range tests {
		p, errs := profile.ParseProfile([]byte(tt.yaml))
		p.Defaults()
		var got []string
		for _, e := range append(errs, p.Validate()...) { // as LoadProfile reports them
			got = append(got, e.Error())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.yaml, diff)
		}
	}
}

func TestProfileDurationsAndDefaults(t *testing.T) {
	p, errs := profile.ParseProfile([]byte("duration: 1.5\nwarmup: 250ms\nrate: 20\nops: [{method: ping}]"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p.Defaults()
	if p.Duration.D() != 1500*time.Millisecond || p.Warmup.D() != 250*time.Millisecond {
		t.Fatalf("durations %v %v", p.Duration.D(), p.Warmup.D())
	}
	// max_vus: rate 20/s × max_delay 1 s (Little: VUs to keep the rate while ops take up to the max delay).
	if p.VUs != 10 || p.MaxVUs != 20 || p.MaxDelay.D() != time.Second || *p.Ops[0].Weight != 1 || p.Seed != 1 {
		t.Fatalf("defaults: vus %d max %d max delay %v weight %d seed %d", p.VUs, p.MaxVUs, p.MaxDelay.D(), *p.Ops[0].Weight, p.Seed)
	}
}

func TestUnknownProfileName(t *testing.T) {
	_, err := profile.LoadProfile("nope")
	if err == nil || !strings.Contains(err.Error(), "built-ins: ") {
		t.Fatalf("err = %v", err)
	}
}

func TestOpParams(t *testing.T) {
	p, _ := profile.ParseProfile([]byte(`ops:
  - {method: tools/call, tool: echo, arguments: {text: hi, n: 2}, progress: true}
  - {method: prompts/get, prompt: greet, arguments: {name: x, n: 3}}
  - {method: resources/read, uri: "mcpbench://static/small"}
  - {method: ping}`))
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range pl.Ops {
		got = append(got, o.Name+" "+string(o.Params))
	}
	want := []string{
		`tools/call:echo {"arguments":{"n":2,"text":"hi"},"name":"echo"}`,
		`prompts/get:greet {"arguments":{"n":"3","name":"x"},"name":"greet"}`,
		`resources/read:mcpbench://static/small {"uri":"mcpbench://static/small"}`,
		`ping `,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if !pl.Ops[0].Progress {
		t.Fatal("progress flag lost")
	}
}
