//go:build !unix

package main

import (
	"os"
	"syscall"

	"github.com/mcpbench/mcpbench/launch"
)

// stopSignals end a run gracefully (watchSignals).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// stopNowSignal: none here (launch kills a child to stop it at once).
var stopNowSignal = launch.StopNowSignal
