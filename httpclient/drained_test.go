package httpclient

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Drained tells, between reads, whether everything that reached the
// client was read: false while a written event waits on the socket or in
// the buffers, true once it was read and nothing more was sent (a chunk's
// trailing CRLF is framing); bodies it cannot look at say so.
func TestDrained(t *testing.T) {
	next := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{"data: 1\n\n", "data: 2\n\n"} {
			w.Write([]byte(ev))
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()
	hc := New(Options{HTTP: HTTP1, Proxy: "none"})
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	d, ok := resp.Body.(Drainer)
	if !ok {
		t.Fatalf("%T is no Drainer", resp.Body)
	}
	br := bufio.NewReaderSize(resp.Body, 16)
	readEvent := func(want string) {
		t.Helper()
		for _, w := range []string{want, "\n"} {
			line, err := br.ReadString('\n')
			if err != nil || line != w {
				t.Fatalf("read %q, %v: want %q", line, err, w)
			}
		}
	}
	readEvent("data: 1\n")
	if drained, known := d.Drained(); !known || !drained || br.Buffered() != 0 {
		t.Fatalf("after the first event: drained %v known %v (buffered %d): want drained", drained, known, br.Buffered())
	}
	next <- struct{}{} // the server writes the second event
	// Not drained until it is read: poll (the event is on its way).
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the second event never showed on the socket")
		}
		drained, known := d.Drained()
		if !known {
			t.Fatal("unknown")
		}
		if !drained {
			break
		}
	}
	readEvent("data: 2\n")
	if drained, known := d.Drained(); !known || !drained {
		t.Fatalf("after the second event: drained %v known %v", drained, known)
	}
	close(next)
}
