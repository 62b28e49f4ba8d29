//go:build linux || darwin

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpbench/mcpbench/refserver"
)

func startRef(t *testing.T, mode refserver.Mode) *refserver.Server {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "", refserver.Options{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// The floor's calls are real: the reference server executes exactly one
// tool call per call the floor counts (plus the one per connection whose
// answer's head it checks), and none fails.
func TestFloorClientCallsReferenceServer(t *testing.T) {
	srv := startRef(t, refserver.ModeStateful)
	const workers, perWorker = 3, 40
	call, closeAll, err := floorClient(t.Context(), srv.URL(), workers)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	var wg sync.WaitGroup
	var fails atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for range perWorker {
				if err := call(context.Background(), w); err != nil {
					fails.Add(1)
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got, want := srv.Stats().ToolCalls, int64(workers*perWorker+workers); got != want || fails.Load() != 0 {
		t.Fatalf("server executed %d tool calls, want %d; %d calls failed", got, want, fails.Load())
	}
}

// A server that answers JSON (no chunked stream) is refused when the floor
// starts, with the reason, instead of the floor waiting for a last chunk
// that never comes.
func TestFloorClientRefusesJSONAnswers(t *testing.T) {
	srv := startRef(t, refserver.ModeJSON)
	_, _, err := floorClient(t.Context(), srv.URL(), 1)
	if err == nil || !strings.Contains(err.Error(), "chunked event stream") {
		t.Fatalf("err = %v, want the floor to refuse a server answering JSON", err)
	}
}

// A planted fault: a server whose every tools/call answer carries an error
// instead of a result. Every call fails, and the count is exact.
func TestFloorClientCountsAnswersWithoutResult(t *testing.T) {
	var toolCalls atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body [512]byte
		n, _ := r.Body.Read(body[:])
		switch {
		case strings.Contains(string(body[:n]), `"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":0,"result":{}}`)
		case strings.Contains(string(body[:n]), `"tools/call"`):
			k := toolCalls.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush() // chunked, as an SSE answer is
			if k == 1 {              // the call that checks the head succeeds
				fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			} else {
				fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32603,\"message\":\"x\"}}\n\n")
			}
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer fake.Close()
	call, closeAll, err := floorClient(t.Context(), fake.URL+"/mcp", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	fails := 0
	for range 7 {
		if err := call(context.Background(), 0); err != nil {
			if !strings.Contains(err.Error(), `no "result"`) {
				t.Fatalf("err = %v, want no result", err)
			}
			fails++
		}
	}
	if fails != 7 || toolCalls.Load() != 8 {
		t.Fatalf("%d of 7 calls failed (want 7); server answered %d tools/call (want 8)", fails, toolCalls.Load())
	}
}
