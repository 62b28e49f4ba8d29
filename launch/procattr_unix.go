//go:build unix && !linux

package launch

import (
	"os"
	"syscall"
)

// childAttr puts a child process in a process group of its own: a
// terminal's Ctrl-C then reaches only the parent, which forwards one
// SIGINT to each child (a second one would stop a child at once).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// interruptChild asks a child to finish gracefully, as Ctrl-C does.
func interruptChild(p *os.Process) error { return p.Signal(os.Interrupt) }

// stopChildNow stops a child at once (its parent's second Ctrl-C): it
// cuts its sessions' closes and writes its results (mcpbench's
// stopNowSignal, caught by a child alone).
func stopChildNow(p *os.Process) error { return p.Signal(StopNowSignal) }

// StopNowSignal is the signal stopChildNow sends (nil where there is
// none, and a child is killed instead).
var StopNowSignal os.Signal = syscall.SIGUSR2
