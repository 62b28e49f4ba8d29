package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

func progressData(k int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d,"total":3}}`, k)
}

const responseData = `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`

// ev is one event as the pipe encodes it.
func ev(id, retry, data string) string {
	s := ""
	if id != "" {
		s += "id: " + id + "\n"
	}
	if retry != "" {
		s += "retry: " + retry + "\n"
	}
	return s + "data: " + data + "\n\n"
}

// upstreamAnswer is a POST's SSE answer: a priming event, 3 progress
// notifications, the response (which carries a retry hint).
var upstreamAnswer = ev("0", "", "") + ev("1", "", progressData(1)) + ev("2", "", progressData(2)) + ev("3", "", progressData(3)) + ev("4", "100", responseData)

// runPipe sends in through a POST stream's pipe with the faults of specs,
// and returns what the client gets, the error that ends it, the planted
// counts and the time it took (fake time under synctest).
func runPipe(t *testing.T, in string, specs ...string) (string, error, map[Kind]int, time.Duration) {
	t.Helper()
	var faults []Fault
	for _, s := range specs {
		if s == "" {
			continue
		}
		f, err := ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	up, _ := url.Parse("http://127.0.0.1:1/mcp")
	var log bytes.Buffer
	p, err := New(Config{Upstream: up, Faults: faults, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := &stream{p: p, idx: 1, kind: TargetPOST, method: "tools/call", msgKind: jsonrpc.KindRequest, rid: "7", ctx: context.Background()}
	s.rng = newRNG(0, 1)
	s.pick()
	start := time.Now()
	out, err := io.ReadAll(s.newPipe(io.NopCloser(strings.NewReader(in))))
	return string(out), err, p.Planted(), time.Since(start)
}

// Each event fault changes the stream as it says, at event boundaries,
// and is counted once.
func TestPipeFaults(t *testing.T) {
	e0, e4 := ev("0", "", ""), ev("4", "100", responseData)
	p := func(k int) string { return ev(fmt.Sprint(k), "", progressData(k)) }
	for _, tt := range []struct {
		spec    string
		want    string
		err     error
		planted int
	}{
		{"", upstreamAnswer, nil, 0},
		{"drop target=progress at=1", e0 + p(1) + p(3) + e4, nil, 1},
		{"drop-response", e0 + p(1) + p(2) + p(3), nil, 1},
		{"duplicate target=progress", e0 + p(1) + p(1) + p(2) + p(3) + e4, nil, 1},
		{"duplicate target=progress id=strip", e0 + p(1) + ev("", "", progressData(1)) + p(2) + p(3) + e4, nil, 1},
		{"duplicate target=response", e0 + p(1) + p(2) + p(3) + e4 + ev("4", "", responseData), nil, 1},
		{"swap target=progress", e0 + p(2) + p(1) + p(3) + e4, nil, 1},
		{"swap target=progress at=2", e0 + p(1) + p(2) + p(3) + e4, nil, 0}, // the response comes first: nothing to swap with
		{"hold-progress", e0 + e4 + p(1) + p(2) + p(3), nil, 3},
		{"cut after=2 close=fin", e0 + p(1), nil, 1},
		{"cut after=2", e0 + p(1), errCut, 1},
		{"cut before_id", "", errCut, 1},
		{"cut mid=2", e0 + p(1) + p(2)[:(len(p(2))-1)/2], errCut, 1},
		{"retry retry=none", e0 + p(1) + p(2) + p(3) + ev("4", "", responseData), nil, 1},
		{"retry retry=5000", ev("0", "5000", "") + p(1) + p(2) + p(3) + ev("4", "5000", responseData), nil, 2},
		{"drop target=tools/list", upstreamAnswer, nil, 0}, // another method's streams
		{"drop target=get", upstreamAnswer, nil, 0},
	} {
		got, err, planted, _ := runPipe(t, upstreamAnswer, tt.spec)
		n := 0
		for _, c := range planted {
			n += c
		}
		if got != tt.want || !errors.Is(err, tt.err) || n != tt.planted {
			t.Errorf("%q:\n got %q (%v), planted %v\nwant %q (%v), planted %d", tt.spec, got, err, planted, tt.want, tt.err, tt.planted)
		}
	}
}

// Delay, stall and keep-open hold the stream as long as they say, and
// forward every event (fake time).
func TestPipeTiming(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want time.Duration
	}{
		{"delay delay=10ms", 50 * time.Millisecond}, // 5 events
		{"stall after=2 for=1s", time.Second},
		{"keep-open for=3s", 3 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			got, err, planted, took := runPipe(t, upstreamAnswer, tt.spec)
			if got != upstreamAnswer || err != nil || took != tt.want || len(planted) != 1 {
				t.Errorf("%q: took %v (want %v), planted %v, error %v, output whole: %v", tt.spec, took, tt.want, planted, err, got == upstreamAnswer)
			}
		})
	}
}
