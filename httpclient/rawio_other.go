//go:build !linux

package httpclient

import (
	"io"
	"net"
	"syscall"
)

// newRawIO: raw I/O is Linux's only (rawio_linux.go); elsewhere the
// connection's own Read and Write are used.
func newRawIO(net.Conn) io.ReadWriter { return nil }

// peekFD is alive's recvfrom(2) with MSG_PEEK.
func peekFD(fd uintptr, p []byte) (int, error) { return peekSocket(syscall.Recvfrom, fd, p) }
