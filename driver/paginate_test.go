package driver_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// pager answers tools/list with page k (from params.cursor "p<k>", the
// first without one) after a 10 ms wait; next(k) is page k's nextCursor
// (nil: none).
func pager(fake *mcptest.Server, next func(k int) any) {
	fake.Handle(mcptest.K("POST", "s1", "tools/list", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		var p struct {
			Cursor string `json:"cursor"`
		}
		json.Unmarshal(r.Params, &p)
		k := 1
		if p.Cursor != "" {
			k, _ = strconv.Atoi(p.Cursor[1:])
		}
		time.Sleep(10 * time.Millisecond)
		res := map[string]any{"tools": []any{map[string]any{"name": "t" + strconv.Itoa(k), "inputSchema": map[string]any{"type": "object"}}}}
		if c := next(k); c != nil {
			res["nextCursor"] = c
		}
		w.Result(r, res)
	})
}

// A list op follows nextCursor to the last page: every page asked for
// with the previous page's cursor, counted, and the latency covers them
// all.
func TestPaginationFollowsCursors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		pager(fake, func(k int) any {
			if k < 3 {
				return "p" + strconv.Itoa(k+1)
			}
			return nil
		})
		s, _, stop := pipeSession(t, fake, nil)
		defer stop()
		op, _ := driver.NewOp("", "tools/list", nil, false)
		var res driver.Result
		s.Do(t.Context(), op, &res)
		if res.Err != nil || res.Pages != 3 {
			t.Fatalf("err %v, pages %d (want 3)", res.Err, res.Pages)
		}
		if got := res.ServiceTime(); got != 30*time.Millisecond {
			t.Errorf("service time %v, want 30ms (three pages of 10 ms)", got)
		}
		var cursors []string
		for _, r := range fake.Find(mcptest.K("POST", "s1", "tools/list", "")) {
			var p map[string]any
			json.Unmarshal(r.Params, &p)
			c, _ := p["cursor"].(string)
			cursors = append(cursors, c)
		}
		if d := cmp.Diff([]string{"", "p2", "p3"}, cursors); d != "" {
			t.Errorf("cursors sent (-want +got):\n%s", d)
		}
	})
}

// A server whose cursors loop or never end fails the op (bad-response),
// bounded by max_pages; a cursor that is not a string too.
func TestPaginationBounded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		next  func(k int) any
		pages int
		want  string
	}{
		{"repeats", func(k int) any { return "p2" }, 2, "repeats the previous page's"},
		{"endless", func(k int) any { return "p" + strconv.Itoa(k+1) }, 5, "still a nextCursor after 5 pages"},
		{"not a string", func(k int) any { return 7 }, 1, "is not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := mcptest.New()
				pager(fake, tc.next)
				s, _, stop := pipeSession(t, fake, nil)
				defer stop()
				op, _ := driver.NewOp("", "tools/list", nil, false)
				op.MaxPages = 5
				var res driver.Result
				s.Do(t.Context(), op, &res)
				if !errors.Is(res.Err, driver.ErrBadResponse) || res.Class != driver.ClassBadResponse || res.Pages != tc.pages {
					t.Fatalf("err %v (class %v), pages %d; want bad-response after %d pages", res.Err, res.Class, res.Pages, tc.pages)
				}
				if !strings.Contains(res.Err.Error(), tc.want) {
					t.Errorf("error %q does not say %q", res.Err, tc.want)
				}
			})
		})
	}
}

// Against the go-sdk server with 4 tools a page, tools/list follows every
// page and lists each tool once; an unpaginated list is one page.
func TestPaginationRefServer(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "", refserver.Options{PageSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s, err := driver.NewSession(&driver.Config{URL: srv.URL()}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ir driver.Result
	if err := s.Initialize(t.Context(), &ir); err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	for _, tc := range []struct {
		method string
		pages  int
	}{{"tools/list", 4}, {"resources/list", 1}, {"resources/templates/list", 1}, {"prompts/list", 1}} {
		op, _ := driver.NewOp("", tc.method, nil, false)
		res := do(t, s, op)
		if res.Pages != tc.pages || res.Ledger.Faulty() {
			t.Errorf("%s: %d pages (want %d), ledger %v", tc.method, res.Pages, tc.pages, res.Ledger.Evidence)
		}
	}
	echo, _ := driver.NewOp("", "tools/call", []byte(`{"name":"echo","arguments":{"text":"x"}}`), false)
	if res := do(t, s, echo); res.Pages != 0 {
		t.Errorf("tools/call: %d pages, want 0", res.Pages)
	}
}
