package profile

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/internal/units"
)

// An override replaces the profile's value, and only the fields given
// change: the profile file < the flags. Sections the profile left out
// are created; a pointer field gets its own copy of the value.
func TestOverrideWins(t *testing.T) {
	file := func() *Profile {
		return &Profile{Name: "p", VUs: 4, MaxVUs: 8, Rate: 10, Warmup: Duration(time.Second),
			Timeouts: Timeouts{Request: Duration(time.Second), Connect: Duration(2 * time.Second)},
			Sweep:    &SweepSpec{By: "vus", From: 1, To: 5, Steps: 3}}
	}
	p := file()
	if err := p.Override(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(file(), p, cmp.AllowUnexported(Profile{})); diff != "" {
		t.Fatalf("no override changed the profile (-want +got):\n%s", diff)
	}
	timeout, rate, errRate, scopes, size := 3*time.Second, 50.0, 2.5, []string{"a", "b"}, units.Size(2048)
	seed, id, to := int64(9), "client", 7.0
	err := p.Override(
		Override{"timeouts.request", &timeout},
		Override{"rate", &rate},
		Override{"max_message_bytes", &size},
		Override{"oauth.client_id", &id},
		Override{"oauth.scopes", &scopes},
		Override{"chaos.seed", &seed},
		Override{"sweep.to", &to},
		Override{"sweep.slo.error_rate", &errRate},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := file()
	want.Timeouts.Request, want.Rate, want.MaxMessageBytes = Duration(3*time.Second), 50, 2048
	want.OAuth = &OAuthSpec{ClientID: "client", Scopes: []string{"a", "b"}}
	want.Chaos = &chaos.Plan{Seed: 9}
	want.Sweep.To = 7
	want.Sweep.SLO.ErrorRate = &errRate
	if diff := cmp.Diff(want, p, cmp.AllowUnexported(Profile{})); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	errRate = 3 // the flag's variable, after the fact
	if *p.Sweep.SLO.ErrorRate != 2.5 {
		t.Fatal("a pointer field shares the override's variable: want its own copy")
	}
}

// vus given without max_vus raises a max_vus the profile set below it;
// max_vus given wins; an unset max_vus stays for Defaults to size.
func TestOverrideVUsRaisesMaxVUs(t *testing.T) {
	vus, maxVUs := 20, 12
	for _, tt := range []struct {
		name          string
		fileMax, want int
		ovs           []Override
	}{
		{"vus raises", 8, 20, []Override{{"vus", &vus}}},
		{"vus below", 30, 30, []Override{{"vus", &vus}}},
		{"max_vus given", 8, 12, []Override{{"vus", &vus}, {"max_vus", &maxVUs}}},
		{"max_vus unset", 0, 0, []Override{{"vus", &vus}}},
	} {
		p := &Profile{VUs: 4, MaxVUs: tt.fileMax}
		if err := p.Override(tt.ovs...); err != nil {
			t.Fatal(err)
		}
		if p.VUs != 20 || p.MaxVUs != tt.want {
			t.Errorf("%s: vus %d max_vus %d, want 20 %d", tt.name, p.VUs, p.MaxVUs, tt.want)
		}
	}
}

// A path that names no field, or a value of the wrong type, is an error
// naming the field.
func TestOverrideMistakes(t *testing.T) {
	n, s := 3, "x"
	for _, tt := range []struct {
		ov   Override
		want string
	}{
		{Override{"timeouts.nope", &n}, `override timeouts.nope: no field "nope"`},
		{Override{"vus.x", &n}, "override vus.x: vus is not a section"},
		{Override{"vus", &s}, "override vus: a string cannot set a int"},
		{Override{"vus", n}, "override vus: want a pointer to the value, got int"},
		{Override{"source", &s}, `override source: no field "source"`},
	} {
		err := (&Profile{}).Override(tt.ov)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.ov, err, tt.want)
		}
	}
}
