package httpclient

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a plain TCP connection with raw system calls
// (syscall.RawSyscall) inside the connection's RawConn, so the netpoller
// still waits for readiness and honours deadlines and Close, but the
// calls do not go through the scheduler's entersyscall/exitsyscall. Those
// wake the runtime's sysmon thread whenever the process was idle before
// (every op, at a few thousand ops per second), which then polls every
// 20 µs for the next millisecond: about four sleeps and wakes of a thread
// per request, measured with perf stat (nanosleep and futex calls). The
// socket is non-blocking, so a raw call never holds its P for longer
// than the copy into or out of the kernel.
//
// Read and Write may run at once (each has its own state); neither is
// safe for concurrent use with itself, as a connection's reads and writes
// are not.
type rawIO struct {
	c  *net.TCPConn
	rc syscall.RawConn

	rbuf  []byte
	rn    int
	rerr  syscall.Errno
	readF func(fd uintptr) bool

	wbuf   []byte
	wn     int
	werr   syscall.Errno
	writeF func(fd uintptr) bool
}

// newRawIO returns raw I/O for c, or nil when c is not a plain TCP
// connection, or in a -race build: the race detector learns that a
// socket's write happens before the read of what it wrote only through
// package syscall's Read and Write (their ioSync annotations), which raw
// calls skip, so a test reading what its in-process server recorded
// before answering would be reported as a race that is not one.
func newRawIO(c net.Conn) io.ReadWriter {
	if raceBuild {
		return nil
	}
	return rawIOFor(c)
}

// rawIOFor is newRawIO in every build (its tests use it under -race too).
func rawIOFor(c net.Conn) io.ReadWriter {
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tcp.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawIO{c: tcp, rc: rc}
	r.readF, r.writeF = r.readFD, r.writeFD
	return r
}

func (r *rawIO) readFD(fd uintptr) bool {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rbuf[0])), uintptr(len(r.rbuf)))
	if e == syscall.EAGAIN {
		return false // wait for the socket to become readable
	}
	if e == syscall.EINTR {
		return r.readFD(fd)
	}
	r.rn, r.rerr = int(n), e
	return true
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rbuf, r.rn, r.rerr = p, 0, 0
	err := r.rc.Read(r.readF)
	r.rbuf = nil
	switch {
	case err != nil:
		return 0, r.opError("read", err)
	case r.rerr != 0:
		return 0, r.opError("read", os.NewSyscallError("read", r.rerr))
	case r.rn == 0:
		return 0, io.EOF
	}
	return r.rn, nil
}

func (r *rawIO) writeFD(fd uintptr) bool {
	for len(r.wbuf) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.wbuf[0])), uintptr(len(r.wbuf)))
		switch e {
		case 0:
			r.wn += int(n)
			r.wbuf = r.wbuf[n:]
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait for room in the socket's buffer
		}
		r.werr = e
		return true
	}
	return true
}

func (r *rawIO) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.wbuf, r.wn, r.werr = p, 0, 0
	err := r.rc.Write(r.writeF)
	r.wbuf = nil
	switch {
	case err != nil:
		return r.wn, r.opError("write", err)
	case r.werr != 0:
		return r.wn, r.opError("write", os.NewSyscallError("write", r.werr))
	}
	return r.wn, nil
}

// opError wraps err as net.Conn's methods do (errors.Is sees the errno,
// net.Error's Timeout the deadline).
func (r *rawIO) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		oe.Op = op // the RawConn's "raw-read"/"raw-write"
		return oe
	}
	return &net.OpError{Op: op, Net: "tcp", Source: r.c.LocalAddr(), Addr: r.c.RemoteAddr(), Err: err}
}

// peekFD is alive's recvfrom(2) with MSG_PEEK, as a raw system call (see
// rawIO): the socket is non-blocking.
func peekFD(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), msgPeek, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}
