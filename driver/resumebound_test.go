package driver_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// hugeRetry is the retry hint of a hostile server: 2^31 ms (24.8 days).
const hugeRetry = 2147483648

// progressEvent is one SSE event: id, a retry field, and progress k of a
// request token.
func progressEvent(id string, retry int, token string, k int) string {
	return fmt.Sprintf("id: %s\nretry: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":%d}}\n\n", id, retry, token, k)
}

// A response stream whose server asks a retry of 2^31 ms before its
// resume: the wait is cut to DefaultMaxRetryWait (30 s) and counted once,
// and the resume then gets the response. (Fake time: the test takes no
// 30 s.)
func TestRetryHintCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.StartSSE()
			w.Raw(progressEvent("a1", hugeRetry, r.ProgressToken(), 1)) // then the stream ends
		})
		fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
			c := first(fake)
			w.Events(mcptest.Event{ID: "a2", Data: mcptest.Response(c.ID, map[string]any{"content": []any{}})})
		})
		s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.RequestTimeout = 5 * time.Second })
		defer stop()
		var res driver.Result
		start := time.Now()
		s.Do(t.Context(), op(t, "tools/call", `{"name":"x","arguments":{}}`, true), &res)
		if res.Err != nil {
			t.Fatalf("op: %v", res.Err)
		}
		want := driver.RetryCap{N: 1, HintMaxMS: hugeRetry, Cap: driver.DefaultMaxRetryWait}
		if res.RetryCapped != want || len(res.Resumes) != 1 || res.Resumes[0].Hint != hugeRetry || res.Resumes[0].Waited != driver.DefaultMaxRetryWait || !res.Resumes[0].Capped || !res.Resumes[0].OK {
			t.Fatalf("capped %+v (want %+v), resumes %+v", res.RetryCapped, want, res.Resumes)
		}
		if d := time.Since(start); d != driver.DefaultMaxRetryWait {
			t.Fatalf("the op took %v of fake time, want the 30 s cap", d)
		}
		s.Close(t.Context())
	})
}

// A capped wait that the run's end cuts (the op's context cancelled
// during it) is counted all the same: the work of a cut op is not lost.
func TestRetryHintCappedCutByRunEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.StartSSE()
			w.Raw(progressEvent("a1", hugeRetry, r.ProgressToken(), 1))
		})
		s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.MaxRetryWait = time.Hour })
		defer stop()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(10*time.Second, cancel) // the run ends 10 s in
		var res driver.Result
		s.Do(ctx, op(t, "tools/call", `{"name":"x","arguments":{}}`, true), &res)
		want := driver.RetryCap{N: 1, HintMaxMS: hugeRetry, Cap: time.Hour}
		if res.Class != driver.ClassCanceled || res.RetryCapped != want || len(res.Resumes) != 0 {
			t.Fatalf("class %v, capped %+v (want %+v), resumes %d", res.Class, res.RetryCapped, want, len(res.Resumes))
		}
		s.Close(t.Context())
	})
}

// resumeSpinner plants a server that answers a tools/call with one event
// (retry: 0) and ends the stream without the response, and every resume
// with one more event and the same end: each resume brings a new event
// id, so only the resume bounds stop the client. It counts the resumes.
func resumeSpinner(fake *mcptest.Server) *atomic.Int64 {
	var resumes atomic.Int64
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.StartSSE()
		w.Raw(progressEvent("e0", 0, r.ProgressToken(), 1))
	})
	fake.Handle(mcptest.K("GET", "s1", "", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.LastEventID, "e"))
		if err != nil {
			w.WriteHeader(405) // the standalone GET: none
			return
		}
		resumes.Add(1)
		w.StartSSE()
		w.Raw(progressEvent("e"+strconv.Itoa(n+1), 0, first(fake).ProgressToken(), n+2))
	})
	return &resumes
}

// retry: 0 with a resume that yields one event: the per-second bound
// (DefaultMaxResumeRate) gives the stream up after exactly that many
// attempts (fake time does not move while the client spins), with class
// resume-limit.
func TestResumeRateBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		served := resumeSpinner(fake)
		s, _, stop := pipeSession(t, fake, nil)
		defer stop()
		var res driver.Result
		s.Do(t.Context(), op(t, "tools/call", `{"name":"x","arguments":{}}`, true), &res)
		if res.Class != driver.ClassResumeLimit || !errors.Is(res.Err, driver.ErrResumeLimit) || !strings.Contains(res.Err.Error(), "100 reconnect attempts within 1 s") {
			t.Fatalf("class %v err %v: want resume-limit after 100 attempts in 1 s", res.Class, res.Err)
		}
		if len(res.Resumes) != driver.DefaultMaxResumeRate || served.Load() != driver.DefaultMaxResumeRate || res.Progress != driver.DefaultMaxResumeRate+1 {
			t.Fatalf("resumes %d, served %d, progress %d: want exactly %d attempts (and the first event's progress too)", len(res.Resumes), served.Load(), res.Progress, driver.DefaultMaxResumeRate)
		}
		s.Close(t.Context())
	})
}

// The same server with the rate bound off: the per-stream bound
// (DefaultMaxStreamResumes) stops it after exactly that many attempts.
func TestResumeStreamBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		served := resumeSpinner(fake)
		s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.MaxResumeRate = -1 })
		defer stop()
		var res driver.Result
		s.Do(t.Context(), op(t, "tools/call", `{"name":"x","arguments":{}}`, true), &res)
		if res.Class != driver.ClassResumeLimit || !strings.Contains(res.Err.Error(), "1000 reconnect attempts on one stream") {
			t.Fatalf("class %v err %v: want resume-limit after 1000 attempts", res.Class, res.Err)
		}
		if len(res.Resumes) != driver.DefaultMaxStreamResumes || served.Load() != driver.DefaultMaxStreamResumes {
			t.Fatalf("resumes %d, served %d: want exactly %d", len(res.Resumes), served.Load(), driver.DefaultMaxStreamResumes)
		}
		s.Close(t.Context())
	})
}

// A GET stream whose server ends it after one event, each time, with
// retry: 0: given up at the rate bound after exactly DefaultMaxResumeRate
// attempts, counted (ResumeLimited, LastError resume-limit); and its
// 2^31 ms retry hint, on another session, is capped and counted.
func TestGETStreamResumeBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		var gets atomic.Int64
		fake.Handle(mcptest.K("GET", "s1", "", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
			n := gets.Add(1)
			w.StartSSE()
			w.Raw(fmt.Sprintf("id: g%d\nretry: 0\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%d}}\n\n", n, n))
		})
		s, _, stop := pipeSession(t, fake, nil)
		defer stop()
		if err := s.OpenStream(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		st := s.StreamStats()
		if !st.ResumeLimited || st.LastError != "resume-limit" || len(st.Resumes) != driver.DefaultMaxResumeRate || gets.Load() != driver.DefaultMaxResumeRate+1 || st.Open {
			t.Fatalf("limited %v, last error %q, attempts %d, GETs served %d, open %v: want given up after %d attempts", st.ResumeLimited, st.LastError, len(st.Resumes), gets.Load(), st.Open, driver.DefaultMaxResumeRate)
		}
		s.Close(t.Context())

		fake2 := mcptest.New()
		var gets2 atomic.Int64
		fake2.Handle(mcptest.K("GET", "s1", "", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
			n := gets2.Add(1)
			w.StartSSE()
			w.Raw(fmt.Sprintf("id: g%d\nretry: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%d}}\n\n", n, hugeRetry, n))
			if n > 1 {
				<-r.Ctx.Done() // the resumed stream stays open
			}
		})
		s2, _, stop2 := pipeSession(t, fake2, nil)
		defer stop2()
		if err := s2.OpenStream(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(driver.DefaultMaxRetryWait) // fake time: the capped wait
		synctest.Wait()
		st = s2.StreamStats()
		want := driver.RetryCap{N: 1, HintMaxMS: hugeRetry, Cap: driver.DefaultMaxRetryWait}
		if st.RetryCapped == nil || *st.RetryCapped != want || len(st.Resumes) != 1 || !st.Resumes[0].OK || !st.Resumes[0].Capped || !st.Open {
			t.Fatalf("capped %+v (want %+v), attempts %+v, open %v", st.RetryCapped, want, st.Resumes, st.Open)
		}
		s2.Close(t.Context())
	})
}
