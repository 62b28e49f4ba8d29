//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/mcpbench/mcpbench/launch"
)

// stopSignals end a run gracefully (watchSignals): Ctrl-C, kill's and
// systemd's SIGTERM, and SIGHUP (the terminal went away).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopNowSignal is how the parent of --processes stops a child at once
// (launch: its second Ctrl-C); a child alone catches it.
var stopNowSignal = launch.StopNowSignal
