package httpclient

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// stagedServer answers one GET with a chunked event stream written in
// stages: the head with a first chunk, then one chunk per receive on
// next, then the last chunk when next is closed.
func stagedServer(t *testing.T, next <-chan string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n: ok\n\n\r\n")
		for s := range next {
			if _, err := io.WriteString(c, chunk(s)); err != nil {
				return
			}
		}
		io.WriteString(c, "0\r\n\r\n")
	}()
	return "http://" + l.Addr().String()
}

func chunk(s string) string {
	const hex = "0123456789abcdef"
	return string(hex[len(s)>>4]) + string(hex[len(s)&15]) + "\r\n" + s + "\r\n"
}

// stagedGET sends a GET to a stagedServer (feeding next) and returns its
// body, closed at the end of the test.
func stagedGET(t *testing.T, ctx context.Context, next <-chan string) *h1body {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", stagedServer(t, next)+"/mcp", nil)
	resp, err := (&h1Transport{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp.Body.(*h1body)
}

// readWant reads once from b and wants exactly want.
func readWant(t *testing.T, b *h1body, want string) {
	t.Helper()
	p := make([]byte, 64)
	n, err := b.Read(p)
	if string(p[:n]) != want || err != nil {
		t.Fatalf("Read = %q, %v; want %q", p[:n], err, want)
	}
}

// A GET stream's body waits idle (WaitReadable) with its connection's read
// buffer given back — also when the chunk's CRLF is what is left buffered
// — returns when the next chunk arrives, and the reads then return every
// byte in order, up to the end of the stream.
func TestWaitReadableWaitsWithoutBuffer(t *testing.T) {
	next := make(chan string)
	waiting := make(chan bool, 1)
	var pc *h1conn
	hook := func(c *h1conn) {
		if c == pc {
			waiting <- c.br == nil
		}
	}
	testHookIdleWait.Store(&hook)
	t.Cleanup(func() { testHookIdleWait.Store(nil) })

	b := stagedGET(t, t.Context(), next)
	pc = b.pc
	readWant(t, b, ": ok\n\n") // buffered with the head
	for _, ev := range []string{"data: 1\n\n", "data: 22\n\n", "id: 3\ndata: 333\n\n"} {
		done := make(chan struct{})
		go func() { b.WaitReadable(); close(done) }()
		select {
		case released := <-waiting:
			if !released {
				t.Fatal("waiting with the read buffer held")
			}
		case <-done:
			t.Fatalf("before %q: WaitReadable returned without waiting", ev)
		}
		next <- ev
		<-done
		readWant(t, b, ev)
	}
	close(next)
	done := make(chan struct{})
	go func() { b.WaitReadable(); close(done) }()
	<-waiting
	<-done
	if n, err := b.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("end: %d, %v; want EOF", n, err)
	}
}

// Closing the body ends a wait; so does the connection's abort.
func TestWaitReadableEndsOnClose(t *testing.T) {
	next := make(chan string)
	t.Cleanup(func() { close(next) })
	b := stagedGET(t, t.Context(), next)
	readWant(t, b, ": ok\n\n")
	done := make(chan struct{})
	go func() { b.WaitReadable(); close(done) }()
	b.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("WaitReadable still waiting 30 s after Close")
	}
	if _, err := b.Read(make([]byte, 8)); err == nil {
		t.Fatal("Read after Close: no error")
	}
}

// Bytes already buffered: WaitReadable returns at once, without waiting.
func TestWaitReadableBuffered(t *testing.T) {
	next := make(chan string)
	t.Cleanup(func() { close(next) })
	var waits int
	var pc *h1conn
	hook := func(c *h1conn) {
		if c == pc {
			waits++
		}
	}
	testHookIdleWait.Store(&hook)
	t.Cleanup(func() { testHookIdleWait.Store(nil) })
	b := stagedGET(t, t.Context(), next)
	pc = b.pc
	b.WaitReadable() // ": ok" is buffered with the head
	if waits != 0 {
		t.Fatalf("waited %d times with bytes buffered", waits)
	}
}

// WatchReadable (epoll, no goroutine): ready is called once per arrival —
// also when the chunk's CRLF is what is left buffered — and the reads then
// return every byte in order, up to the end of the stream.
func TestWatchReadableFiresOncePerArrival(t *testing.T) {
	if theWatcher() == nil {
		t.Skip("no epoll watcher on " + runtime.GOOS)
	}
	next := make(chan string)
	b := stagedGET(t, t.Context(), next)
	readWant(t, b, ": ok\n\n")
	var calls atomic.Int32
	fired := make(chan struct{}, 4)
	ready := func() { calls.Add(1); fired <- struct{}{} }
	for i, ev := range []string{"data: 1\n\n", "data: 22\n\n", "id: 3\ndata: 333\n\n"} {
		if !b.WatchReadable(ready) {
			t.Fatalf("before %q: not watched", ev)
		}
		if b.pc.br != nil {
			t.Fatal("watched with the read buffer held")
		}
		next <- ev
		<-fired
		if n := calls.Load(); n != int32(i+1) {
			t.Fatalf("ready called %d times after %d arrivals", n, i+1)
		}
		readWant(t, b, ev)
	}
	close(next)
	if !b.WatchReadable(ready) {
		t.Fatal("before the end: not watched")
	}
	<-fired
	if n, err := b.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("end: %d, %v; want EOF", n, err)
	}
	if n := calls.Load(); n != 4 {
		t.Fatalf("ready called %d times, want 4", n)
	}
}

// A watched body that is closed, or whose request's context ends (before
// or after the watch is armed), calls ready, and the read then fails.
func TestWatchReadableEndsOnAbort(t *testing.T) {
	if theWatcher() == nil {
		t.Skip("no epoll watcher on " + runtime.GOOS)
	}
	for _, how := range []string{"close", "cancel after", "cancel before"} {
		t.Run(how, func(t *testing.T) {
			next := make(chan string)
			t.Cleanup(func() { close(next) })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			b := stagedGET(t, ctx, next)
			readWant(t, b, ": ok\n\n")
			if how == "cancel before" {
				cancel()
				for deadline := time.Now().Add(30 * time.Second); !b.pc.aborted.Load(); {
					if time.Now().After(deadline) {
						t.Fatal("the context's abort never ran")
					}
					runtime.Gosched()
				}
			}
			fired := make(chan struct{}, 2)
			if !b.WatchReadable(func() { fired <- struct{}{} }) {
				t.Fatal("not watched")
			}
			switch how {
			case "close":
				b.Close()
			case "cancel after":
				cancel()
			}
			select {
			case <-fired:
			case <-time.After(30 * time.Second):
				t.Fatal("ready not called 30 s after the abort")
			}
			if _, err := b.Read(make([]byte, 8)); err == nil {
				t.Fatal("Read after the abort: no error")
			}
			if len(fired) != 0 {
				t.Fatal("ready called twice")
			}
		})
	}
}
