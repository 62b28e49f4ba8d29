package main

import (
	"testing"

	"github.com/mcpbench/mcpbench/internal/procrun"
)

// The parent of --processes reads its children's exit codes as procrun
// knows them: they must be mcpbench's.
func TestExitCodesAreProcrunS(t *testing.T) {
	for _, c := range []struct{ cmd, procrun int }{
		{exitOK, procrun.ExitOK}, {exitFailed, procrun.ExitFailed}, {exitUsage, procrun.ExitUsage},
		{exitResultsLost, procrun.ExitResultsLost}, {exitThresholds, procrun.ExitThresholds}, {exitInterrupted, procrun.ExitInterrupted},
	} {
		if c.cmd != c.procrun {
			t.Errorf("mcpbench exits %d where procrun expects %d", c.cmd, c.procrun)
		}
	}
}
