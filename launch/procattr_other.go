//go:build !unix

package launch

import (
	"os"
	"syscall"
)

// childAttr: the children share the console (no process groups here).
func childAttr() *syscall.SysProcAttr { return nil }

// interruptChild stops a child: this system cannot send it an interrupt,
// so what it wrote so far is what is kept.
func interruptChild(p *os.Process) error { return p.Kill() }

// StopNowSignal: none here (stopChildNow kills).
var StopNowSignal os.Signal

// stopChildNow stops a child at once: killed, as interruptChild does.
func stopChildNow(p *os.Process) error { return p.Kill() }
