package launch

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// retryPlant is a server whose tool calls answer SSE with one log event
// carrying retry (ms) and then end without the response; a resume
// (Last-Event-ID eN) gets one more event and the same end. Everything
// else is the reference server's. It counts the tool calls and the
// resumes it served.
type retryPlant struct {
	retry          int64
	calls, resumes atomic.Int64
}

func (p *retryPlant) event(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "id: e%d\nretry: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%d}}\n\n", n, p.retry, n)
}

func (p *retryPlant) handler(ref http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Last-Event-ID"); r.Method == http.MethodGet && strings.HasPrefix(id, "e") {
			n, _ := strconv.Atoi(id[1:])
			p.resumes.Add(1)
			p.event(w, n+1)
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"tools/call"`) {
				p.calls.Add(1)
				p.event(w, 0)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		ref.ServeHTTP(w, r)
	})
}

func retrySummary(t *testing.T, dir string) *results.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, results.FileSummary))
	if err != nil {
		t.Fatalf("no summary: %v", err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// runRetryPlant runs 2 VUs for 2 s against p and returns the summary and
// the text report.
func runRetryPlant(t *testing.T, p *retryPlant) (*results.Summary, string) {
	t.Helper()
	srv := httptest.NewServer(p.handler(refserverHandler(t, "retry")))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "out")
	pr := toolProfile(t, "smoke", "echo", map[string]any{"text": "hi"}, false, "vus", 2, "duration", 2*time.Second, "warmup", time.Duration(0), "graceful_stop", time.Second)
	pr.URL = srv.URL + "/mcp"
	out, errs, code := testRun(t, Spec{Command: "run", Profile: pr, Out: dir, Quiet: true}, (*Test).Run)
	if code != int(ExitOK) && code != int(ExitFailed) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	return retrySummary(t, dir), out
}

// A retry hint of 2^31 ms: every VU's op waits the capped 30 s, which
// the run's end cuts; each capped wait is counted (exactly one per tool
// call) and named in the report, and the run ends on time.
func TestRunRetryHintCapped(t *testing.T) {
	t.Parallel()
	p := &retryPlant{retry: 2147483648}
	s, out := runRetryPlant(t, p)
	r := s.All.Resumes
	if p.calls.Load() != 2 || r == nil || r.RetryCapped != 2 || r.RetryHintMaxMS != 2147483648 || r.RetryCapMS != 30000 || r.Attempts != 0 || s.All.Interrupted != 2 {
		t.Fatalf("tool calls %d; resumes %+v, interrupted %d: want 2 capped waits (hint 2147483648 ms, cap 30000 ms), no attempt, 2 interrupted", p.calls.Load(), r, s.All.Interrupted)
	}
	if !strings.Contains(out, "retry hint capped: 2 (server asked 2147483648 ms, waited 30s max)") {
		t.Fatalf("report lacks the capped line:\n%s", out)
	}
}

// retry: 0 with a resume that yields one event: every resume the server
// served is in the summary (the ops the run's end cut included), the
// streams given up at the bound are counted as class resume-limit, and
// every tool call is either given up or cut. Exact but for the attempt
// each cut op may have had in flight at the cut (sent but not yet seen by
// the server, or served but not yet answered): at most one per
// interrupted op.
func TestRunResumeSpinBounded(t *testing.T) {
	t.Parallel()
	p := &retryPlant{retry: 0}
	s, out := runRetryPlant(t, p)
	r := s.All.Resumes
	limited := s.All.ErrorsByClass["resume-limit"]
	served, cut := p.resumes.Load(), s.All.Interrupted
	if r == nil || r.Attempts < served || r.Attempts > served+cut || r.Accepted > served || r.Accepted < served-cut ||
		r.Limited != limited || p.calls.Load() != limited+cut || r.RetryCapped != 0 {
		t.Fatalf("server: %d calls, %d resumes; summary: resumes %+v, resume-limit %d, interrupted %d", p.calls.Load(), served, r, limited, cut)
	}
	if want := fmt.Sprintf("Resumes (response streams): %d attempts, %d accepted", r.Attempts, r.Accepted); !strings.Contains(out, want) {
		t.Fatalf("report lacks %q:\n%s", want, out)
	}
	if limited > 0 && !strings.Contains(out, fmt.Sprintf("resume bound hit: %d streams given up", limited)) {
		t.Fatalf("report lacks the bound line:\n%s", out)
	}
	t.Logf("%d tool calls, %d resumes, %d given up at the bound", p.calls.Load(), p.resumes.Load(), limited)
}

// refserverHandler is the reference server's handler (closed with the
// test).
func refserverHandler(t *testing.T, name string) http.Handler {
	h, err := refserver.NewHandler(refserver.Options{Mode: refserver.ModeStateful})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := h.(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	return h
}
