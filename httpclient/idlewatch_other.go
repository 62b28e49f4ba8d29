//go:build !linux

package httpclient

import "sync/atomic"

// idleWatcher is Linux's only (epoll, idlewatch_linux.go); elsewhere an
// idle stream waits in a goroutine (h1body.WaitReadable).
type idleWatcher struct{}

func theWatcher() *idleWatcher                                    { return nil }
func (w *idleWatcher) arm(uintptr, func(), *atomic.Uint64) uint64 { return 0 }
func (w *idleWatcher) take(id uint64) func()                      { return nil }
func (w *idleWatcher) forget(fd uintptr)                          {}
