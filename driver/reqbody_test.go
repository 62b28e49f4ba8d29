package driver_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// lateBodyRT answers every request at once and, for the first one, reads
// its body only after the second request was sent and closes it only when
// the test ends, as net/http's write loop may after an early answer or a
// cut connection (RoundTrip may return before the body was read).
type lateBodyRT struct {
	mu     sync.Mutex
	n      int
	second chan struct{} // closed when the second request is sent
	done   chan struct{} // closed when the test ends: the first body is closed then
	read   chan string   // what the transport finally read of the first body
}

func (rt *lateBodyRT) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	n := rt.n
	rt.n++
	rt.mu.Unlock()
	cp, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	sent, _ := io.ReadAll(cp)
	switch n {
	case 0:
		go func() {
			<-rt.second
			b, _ := io.ReadAll(req.Body)
			rt.read <- string(b)
			<-rt.done
			req.Body.Close()
		}()
	case 1:
		close(rt.second)
		req.Body.Close()
	default:
		req.Body.Close()
	}
	m, err := jsonrpc.Parse(sent)
	if err != nil || m.ID == nil {
		return &http.Response{StatusCode: http.StatusAccepted, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	}
	id, _ := strconv.ParseInt(string(m.ID), 10, 64)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"late","version":"0"}}}`
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req}, nil
}

// A transport that still reads a request's body after RoundTrip returned
// must read that request's bytes, not the next request's: the lane gives
// the next request a new body instead of resetting the one still held
// (the race -race found in CI: net/http's write loop reading a reset
// body).
func TestRequestBodyHeldByTheTransportIsNotReused(t *testing.T) {
	rt := &lateBodyRT{second: make(chan struct{}), done: make(chan struct{}), read: make(chan string, 1)}
	defer close(rt.done)
	s, err := driver.NewSession(&driver.Config{URL: "http://127.0.0.1:9/mcp", HTTPClient: &http.Client{Transport: rt}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	select {
	case got := <-rt.read:
		if !strings.Contains(got, `"method":"initialize"`) || bytes.Contains([]byte(got), []byte("notifications/initialized")) {
			t.Fatalf("the transport read %q as the initialize request's body: the lane reused a body the transport still held", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first body was never read")
	}
}
