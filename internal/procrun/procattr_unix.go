//go:build unix && !linux

package procrun

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
