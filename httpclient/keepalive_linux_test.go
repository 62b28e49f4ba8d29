package httpclient

import (
	"net"
	"net/http"
	"syscall"
	"testing"
)

// The client's connections probe with jittered keep-alive settings
// (netutil.KeepAlive): idle 30–45 s, interval 15–20 s.
func TestClientKeepAliveJittered(t *testing.T) {
	url, _ := rawServer(t, func(*http.Request) string { return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" })
	tr := &h1Transport{}
	if _, _, err := get(t, tr, url); err != nil {
		t.Fatal(err)
	}
	var pcs []*h1conn
	for _, conns := range tr.idle {
		pcs = append(pcs, conns...)
	}
	if len(pcs) != 1 {
		t.Fatalf("%d idle connections, want 1", len(pcs))
	}
	rc, _ := pcs[0].c.(*net.TCPConn).SyscallConn()
	var idle, intvl int
	rc.Control(func(fd uintptr) {
		idle, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
		intvl, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL)
	})
	if idle < 30 || idle > 45 || intvl < 15 || intvl > 20 {
		t.Fatalf("keep-alive idle %d s, interval %d s: want 30–45, 15–20 (whole seconds, rounded up)", idle, intvl)
	}
}
