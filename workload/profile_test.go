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
