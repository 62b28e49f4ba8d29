package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/testenv"
)

// linkChaosProfile is resume-chaos with two cut kinds: half the call
// streams are cut before their first event, the rest after two events.
const linkChaosProfile = `name: link-chaos
vus: 4
duration: 2s
warmup: 0s
resume:
  policy: honour-retry
  default_retry: 20ms
ops:
  - method: tools/call
    tool: progress
    arguments: {count: 5, interval_ms: 5}
    progress: true
chaos:
  faults:
    - action: cut
      when: {before_first_event: true}
      close: rst
      target: post
      probability: 0.5
    - action: cut
      when: {after_events: 2}
      close: rst
      target: post
`

// Against `serve --stream-links` every cut stream — cut before its first
// event or after two — is resumed through its rel="stream" link and the
// ledger stays clean; against plain `serve` the same run resumes at the
// endpoint and finds the streams cut before any event unresumable, as
// before the mode existed.
func TestRunResumesThroughStreamLinks(t *testing.T) {
	testenv.Long(t)
	prof := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(prof, []byte(linkChaosProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, links := range []bool{true, false} {
		var args []string
		if links {
			args = append(args, "--stream-links")
		}
		srv := startServe(t, args...)
		dir := filepath.Join(t.TempDir(), "r")
		out, errs, _ := run(t, "run", "--url", srv.url, "--profile", prof, "-q", "--out", dir)
		sum, _ := netResults(t, dir)
		l, r, c := sum.All.Ledger, sum.All.Resumes, sum.Chaos
		if l == nil || r == nil || c == nil || c.CutsRST == 0 || c.CutsRST != l.Streams {
			t.Fatalf("links %v: ledger %+v resumes %+v chaos %+v: want every stream cut once\n%s\n%s", links, l, r, c, out, errs)
		}
		unresumable := l.Verdicts["unresumable"]
		if links {
			if l.Faulty != 0 || sum.All.Errors != 0 || l.ViaLink != l.Streams || r.ViaLink != r.Attempts || r.Accepted != r.Attempts || r.Attempts != l.Streams {
				t.Errorf("with links: ledger %+v resumes %+v errors %d: want every stream resumed once through its link, clean", l, r, sum.All.Errors)
			}
			if !strings.Contains(out, "stream links (SEP-1335): ") {
				t.Errorf("no stream-link line:\n%s", out)
			}
			continue
		}
		if l.ViaLink != 0 || r.ViaLink != 0 || unresumable == 0 || unresumable+r.Accepted != l.Streams || l.Faulty != unresumable {
			t.Errorf("without links: ledger %+v resumes %+v: want the early cuts unresumable, the rest resumed at the endpoint", l, r)
		}
		if strings.Contains(out, "SEP-1335") {
			t.Errorf("stream-link lines without links:\n%s", out)
		}
	}
}
