package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/workload"
)

// The library names settings (profile.SettingError); the CLI prints
// them as its flags, wrapped or not, as it did when the library named
// the flags itself.
func TestSettingFlagsText(t *testing.T) {
	_, err := workload.ParseSegment("", "0,1")
	if got := cliText(fmt.Errorf("run: %w", err)); got != "run: --segment-sequence needs --segment" {
		t.Errorf("got %q", got)
	}
	err = (&profile.Profile{}).AbortAll(true, time.Second, true)
	if got := cliText(withCode(exitUsage, err)); got != "--abort-on-fail: no threshold to judge: give --threshold (e.g. --threshold 'p99<200ms')" {
		t.Errorf("got %q", got)
	}
}
