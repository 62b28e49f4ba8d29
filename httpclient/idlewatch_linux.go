package httpclient

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// idleWatcher watches the sockets of idle GET streams for readability
// with an epoll instance of its own, so that an idle stream needs no
// goroutine (h1body.WatchReadable): each costs an entry here instead of a
// goroutine's stack (2 KiB) and descriptor. The epoll descriptor is itself
// non-blocking and watched by Go's netpoller, so no thread blocks on it
// either: one goroutine, parked until some stream has bytes, collects the
// ready ones (epoll_wait with no timeout) and calls their ready functions.
// Level-triggered and one-shot: a socket that is readable when armed fires
// at once; a fired one stays quiet until armed again.
type idleWatcher struct {
	epfd int
	f    *os.File

	mu    sync.Mutex
	next  uint64
	armed map[uint64]func() // by watch id: the ready function
}

var watcherOnce struct {
	sync.Once
	w *idleWatcher
}

// theWatcher returns the process's idle watcher, started on first use;
// nil when epoll is not available (the streams then wait in a goroutine).
func theWatcher() *idleWatcher {
	watcherOnce.Do(func() {
		epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		if err := syscall.SetNonblock(epfd, true); err != nil {
			syscall.Close(epfd)
			return
		}
		w := &idleWatcher{epfd: epfd, f: os.NewFile(uintptr(epfd), "mcpbench-idle-streams"), armed: map[uint64]func(){}}
		rc, err := w.f.SyscallConn()
		if err != nil {
			w.f.Close()
			return
		}
		watcherOnce.w = w
		go w.loop(rc)
	})
	return watcherOnce.w
}

const watchEvents = syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT

// arm watches fd (valid during the call: RawConn.Control) for one
// readiness, after which ready is called once on the watcher's goroutine,
// unless take(id) took it first. The watch id goes to slot before the
// socket is armed (so that an abort finds it). It returns the id, or 0
// when the socket cannot be watched (ready will not be called).
func (w *idleWatcher) arm(fd uintptr, ready func(), slot *atomic.Uint64) uint64 {
	w.mu.Lock()
	w.next++
	id := w.next
	w.armed[id] = ready
	w.mu.Unlock()
	slot.Store(id)
	ev := syscall.EpollEvent{Events: watchEvents, Fd: int32(id), Pad: int32(id >> 32)}
	// A socket armed before stays in the set, disabled once it fired.
	err := syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_MOD, int(fd), &ev)
	if err == syscall.ENOENT {
		err = syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	}
	if err != nil {
		slot.CompareAndSwap(id, 0)
		if w.take(id) == nil {
			return id // an abort took it meanwhile: ready is called
		}
		return 0
	}
	return id
}

// take removes watch id and returns its ready function, or nil when it
// fired (or was taken) already.
func (w *idleWatcher) take(id uint64) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	ready := w.armed[id]
	delete(w.armed, id)
	return ready
}

// forget drops fd from the epoll set (valid during the call: Control).
func (w *idleWatcher) forget(fd uintptr) {
	syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil) //nolint:errcheck // not in the set: nothing to drop
}

// loop collects ready sockets for ever (the watcher lives as long as the
// process): parked in the netpoller until the epoll descriptor is
// readable, then epoll_wait without a timeout until none is left.
func (w *idleWatcher) loop(rc syscall.RawConn) {
	var events [128]syscall.EpollEvent
	var ready []func()
	var n int
	collect := func(fd uintptr) bool {
		var err error
		n, err = syscall.EpollWait(int(fd), events[:], 0)
		if err == syscall.EINTR {
			return false
		}
		return n > 0 || err != nil
	}
	for {
		if err := rc.Read(collect); err != nil {
			return // the descriptor is gone (never, in practice)
		}
		w.mu.Lock()
		for _, ev := range events[:max(n, 0)] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if f := w.armed[id]; f != nil {
				delete(w.armed, id)
				ready = append(ready, f)
			}
		}
		w.mu.Unlock()
		for i, f := range ready {
			f()
			ready[i] = nil
		}
		ready = ready[:0]
	}
}
