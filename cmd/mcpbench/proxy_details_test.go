package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/proxy"
)

// The proxy's printed verdict gives each judged check's detail (what was
// counted, what was left out) under its Checks line.
func TestPrintProxyVerdictsDetails(t *testing.T) {
	v := proxy.ClientVerdicts{Checks: map[string]string{"delete_at_end": "pass", "reinitialize_after_404": "fail"},
		Details: map[string]string{
			"delete_at_end":          "4 of 4 sessions still live deleted; 17 sessions ended by a 404 (planted or the server's) need no DELETE and are not counted",
			"reinitialize_after_404": "16 of 17 sessions that met a planted 404 re-initialized by their client; 1 not (…)",
		}}
	var b bytes.Buffer
	launch.WriteProxyVerdicts(&b, v, map[proxy.Kind]int{proxy.KindStatus: 21})
	want := "Checks: delete_at_end pass, reinitialize_after_404 fail\n" +
		"        reinitialize_after_404 fail: 16 of 17 sessions that met a planted 404 re-initialized by their client; 1 not (…)\n" +
		"        delete_at_end pass: 4 of 4 sessions still live deleted; 17 sessions ended by a 404 (planted or the server's) need no DELETE and are not counted\n"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("printed:\n%s\nwant the lines:\n%s", b.String(), want)
	}
}
