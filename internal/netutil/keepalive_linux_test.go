package netutil

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// Each connection draws its own keep-alive idle time and interval, within
// the stated bounds, so connections opened together do not probe together.
func TestKeepAliveJittered(t *testing.T) {
	idles, intervals := map[time.Duration]bool{}, map[time.Duration]bool{}
	for range 200 {
		k := KeepAlive()
		if !k.Enable || k.Count != KeepAliveCount ||
			k.Idle < KeepAliveIdle || k.Idle >= KeepAliveIdle+KeepAliveJitter ||
			k.Interval < KeepAliveInterval || k.Interval >= KeepAliveInterval+KeepAliveInterval/3 {
			t.Fatalf("%+v: out of bounds", k)
		}
		idles[k.Idle.Truncate(time.Second)] = true
		intervals[k.Interval.Truncate(time.Second)] = true
	}
	if len(idles) < 10 || len(intervals) < 4 {
		t.Fatalf("%d distinct idle seconds, %d distinct interval seconds in 200 draws: not spread", len(idles), len(intervals))
	}
}

// The listener's accepted connections carry those settings (the socket
// options the kernel probes by, in whole seconds).
func TestKeepAliveListenerSetsSocket(t *testing.T) {
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	kl := KeepAliveListener{Listener: ln}
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := kl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, _ := c.(*net.TCPConn).SyscallConn()
	var on, idle, intvl, cnt int
	rc.Control(func(fd uintptr) {
		on, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
		idle, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
		intvl, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL)
		cnt, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT)
	})
	if on != 1 || idle < 30 || idle > 45 || intvl < 15 || intvl > 20 || cnt != KeepAliveCount {
		t.Fatalf("SO_KEEPALIVE %d, idle %d s, interval %d s, count %d: want on, 30–45, 15–20 (whole seconds, rounded up), %d", on, idle, intvl, cnt, KeepAliveCount)
	}
}
