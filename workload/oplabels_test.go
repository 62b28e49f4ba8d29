package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/profile"
)

// Two ops with one label (by default: the method and the tool) would be
// two rows of one name and repeat every intervals.csv column: refused,
// naming both; a name of its own for each makes the profile valid.
func TestDuplicateOpLabelsRefused(t *testing.T) {
	for _, tc := range []struct {
		ops  string
		want []string // problems about names
	}{
		{`  - {method: tools/call, tool: echo, arguments: {text: a}}
  - {method: tools/call, tool: echo, arguments: {text: bbbbbbbb}}
  - {method: ping}
  - {method: ping}
  - {method: tools/call, tool: echo}
`, []string{
			`ops[1].name: "tools/call:echo" is also the label of ops[0]: give each op a name of its own (name: ...)`,
			`ops[3].name: "ping" is also the label of ops[2]: give each op a name of its own (name: ...)`,
			`ops[4].name: "tools/call:echo" is also the label of ops[0]: give each op a name of its own (name: ...)`,
		}},
		{`  - {name: small, method: tools/call, tool: echo, arguments: {text: a}}
  - {name: tools/call:echo, method: ping}
  - {method: tools/call, tool: echo}
`, []string{
			`ops[2].name: "tools/call:echo" is also the label of ops[1]: give each op a name of its own (name: ...)`,
		}},
		{`  - {name: small, method: tools/call, tool: echo, arguments: {text: a}}
  - {name: large, method: tools/call, tool: echo, arguments: {text: bbbbbbbb}}
  - {method: tools/call, tool: echo}
`, nil},
	} {
		path := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(path, []byte("name: p\nvus: 1\nduration: 1s\nops:\n"+tc.ops), 0o644)
		p, err := profile.LoadProfile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range p.Validate() {
			if strings.Contains(e.Error(), ".name: ") {
				got = append(got, e.Error())
			}
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("profile ops\n%s\nproblems:\n%s\nwant:\n%s", tc.ops, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
