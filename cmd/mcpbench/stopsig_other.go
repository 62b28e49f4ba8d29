//go:build !unix

package main

import (
	"os"
	"syscall"

	"github.com/mcpbench/mcpbench/internal/procrun"
)

// stopSignals end a run gracefully (watchSignals).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// stopNowSignal: none here (procrun kills a child to stop it at once).
var stopNowSignal = procrun.StopNowSignal
