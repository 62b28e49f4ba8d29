package profile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
		p, errs := ParseProfile([]byte(tt.yaml))
		p.parseErrs = errs
		p.Defaults()
		var got []string
		for _, e := range p.Validate() {
			got = append(got, e.Error())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.yaml, diff)
		}
	}
}
