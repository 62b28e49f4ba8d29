package httpclient

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// rawPair returns the raw I/O of a loopback connection's client end and
// the server end.
func rawPair(t *testing.T) (*net.TCPConn, io.ReadWriter, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	rw := rawIOFor(c)
	if rw == nil {
		t.Fatal("no raw I/O for a TCP connection")
	}
	return c.(*net.TCPConn), rw, s
}

// TestRawIO: raw reads and writes carry the bytes both ways (a write
// larger than the socket buffers waits for room), an orderly close reads
// as io.EOF, a reset as ECONNRESET, a deadline as a timeout, and Close
// unblocks a blocked read — as the connection's own Read and Write do.
func TestRawIO(t *testing.T) {
	t.Run("bytes", func(t *testing.T) {
		_, rw, s := rawPair(t)
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB: more than the socket buffers
		got := make(chan []byte)
		go func() { b, _ := io.ReadAll(io.LimitReader(s, int64(len(big)))); got <- b }()
		if n, err := rw.Write(big); n != len(big) || err != nil {
			t.Fatalf("Write: %d, %v; want %d, nil", n, err, len(big))
		}
		if b := <-got; !bytes.Equal(b, big) {
			t.Fatalf("the server read %d bytes, not the %d written", len(b), len(big))
		}
		s.Write([]byte("answer"))
		s.Close()
		b, err := io.ReadAll(rw)
		if string(b) != "answer" || err != nil {
			t.Fatalf("ReadAll: %q, %v; want \"answer\", nil (EOF ends it)", b, err)
		}
		if n, err := rw.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("Read after the end: %d, %v; want 0, EOF", n, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		_, rw, s := rawPair(t)
		s.(*net.TCPConn).SetLinger(0)
		s.Close()
		_, err := rw.Read(make([]byte, 8))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("Read after a reset: %v; want ECONNRESET", err)
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "read" {
			t.Fatalf("Read after a reset: %#v; want a *net.OpError of op read", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		c, rw, _ := rawPair(t)
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := rw.Read(make([]byte, 8))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("Read past the deadline: %v; want a timeout", err)
		}
	})
	t.Run("close", func(t *testing.T) {
		c, rw, _ := rawPair(t)
		done := make(chan error)
		go func() { _, err := rw.Read(make([]byte, 8)); done <- err }()
		// Whether the Read blocked already or starts after, it ends.
		c.Close()
		select {
		case err := <-done:
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Read on a closed connection: %v; want net.ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not unblock the Read")
		}
	})
}

// TestRawIOAllocs: a read and a write allocate nothing.
func TestRawIOAllocs(t *testing.T) {
	_, rw, s := rawPair(t)
	buf := make([]byte, 64)
	msg := []byte("ping")
	if n := testing.AllocsPerRun(100, func() {
		rw.Write(msg)
		io.ReadFull(s, buf[:4])
		s.Write(msg)
		io.ReadFull(rw, buf[:4])
	}); n > 0 {
		t.Errorf("%.1f allocations per write and read, want 0", n)
	}
}
