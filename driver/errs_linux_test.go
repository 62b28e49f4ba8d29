//go:build linux

package driver_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
)

// fullListener returns the address of a loopback listener that never
// accepts and whose accept queue is full, so a new connection hangs in
// its handshake (Linux drops the SYN) until the client gives up.
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skip(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skip(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Skip(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	// Fill the queue: connections complete until it is full; the next
	// one times out.
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("the accept queue never filled")
	return ""
}

// A connect timeout names itself, the address and its limit, and is a
// timeout (ClassTimeout), not "dial tcp …: i/o timeout".
func TestConnectTimeoutNamesLimit(t *testing.T) {
	addr := fullListener(t)
	cfg := &driver.Config{URL: "http://" + addr + "/mcp", ConnectTimeout: 150 * time.Millisecond, RequestTimeout: 5 * time.Second}
	err := initErr(t, cfg)
	onceIn(t, err, "connect timeout: no TCP connection to "+addr+" within 150ms (httpclient.Options.ConnectTimeout)")
	if strings.Contains(err.Error(), "i/o timeout") {
		t.Errorf("%q repeats the dialer's text", err)
	}
	if !errors.Is(err, httpclient.ErrConnectTimeout) || !errors.Is(err, context.DeadlineExceeded) || driver.Classify(err) != driver.ClassTimeout {
		t.Errorf("%v: want ErrConnectTimeout, a deadline, ClassTimeout (got %v)", err, driver.Classify(err))
	}
}
