package driver_test

import (
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

func note(method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
}

func logNote(k int) map[string]any {
	return note("notifications/message", map[string]any{"level": "info", "data": map[string]any{"n": k}})
}

// Log messages, tool-list changes and resource updates are counted on the
// stream they came on — a call's response stream or the GET stream —
// exactly as many as the server sent.
func TestNotificationsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("GET", "s1", "", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{Data: logNote(1)}, mcptest.Event{Data: note("notifications/tools/list_changed", nil)},
				mcptest.Event{Data: logNote(2)}, mcptest.Event{Data: note("notifications/tools/list_changed", nil)},
				mcptest.Event{Data: note("notifications/resources/updated", map[string]any{"uri": "x://a"})})
			<-r.Ctx.Done()
		})
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{Data: logNote(1)}, mcptest.Event{Data: logNote(2)}, mcptest.Event{Data: logNote(3)},
				mcptest.Event{Data: note("notifications/tools/list_changed", nil)},
				mcptest.Event{Data: mcptest.Response(r.ID, map[string]any{"content": []any{}})})
		})
		s, _, stop := pipeSession(t, fake, nil)
		defer stop()
		if err := s.OpenStream(t.Context()); err != nil {
			t.Fatal(err)
		}
		op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"log"}`), false)
		var res driver.Result
		s.Do(t.Context(), op, &res)
		synctest.Wait()
		if d := cmp.Diff(driver.Notifications{Messages: 3, ToolsListChanged: 1}, res.Notifications); d != "" || res.Err != nil {
			t.Errorf("response stream (-want +got, err %v):\n%s", res.Err, d)
		}
		st := s.StreamStats()
		if d := cmp.Diff(driver.Notifications{Messages: 2, ToolsListChanged: 2, ResourcesUpdated: 1}, st.Notifications); d != "" {
			t.Errorf("GET stream (-want +got):\n%s", d)
		}
		if st.Ledger.Faulty() || res.Ledger.Faulty() {
			t.Errorf("ledgers: %v %v", st.Ledger.Evidence, res.Ledger.Evidence)
		}
		s.Close(t.Context())
	})
}

// Against the go-sdk server: the log tool's messages count on its stream
// once the session set a level (none before); toggle_tool's list change
// counts on the GET stream.
func TestNotificationsRefServer(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "", refserver.Options{})
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
	if err := s.OpenStream(t.Context()); err != nil {
		t.Fatal(err)
	}
	logOp, _ := driver.NewOp("", "tools/call", []byte(`{"name":"log","arguments":{"count":5,"level":"info"}}`), false)
	if res := do(t, s, logOp); res.Notifications.Messages != 0 {
		t.Fatalf("%d log messages before logging/setLevel, want 0", res.Notifications.Messages)
	}
	level, _ := driver.NewOp("", "logging/setLevel", []byte(`{"level":"debug"}`), false)
	do(t, s, level)
	if res := do(t, s, logOp); res.Notifications.Messages != 5 || res.Ledger.Faulty() {
		t.Fatalf("%d log messages after logging/setLevel (ledger %v), want 5", res.Notifications.Messages, res.Ledger.Evidence)
	}
	toggle, _ := driver.NewOp("", "tools/call", []byte(`{"name":"toggle_tool"}`), false)
	do(t, s, toggle)
	waitFor(t, "tools/list_changed on the GET stream", func() bool { return s.StreamStats().Notifications.ToolsListChanged > 0 })
	s.Close(t.Context())
	if n := s.StreamStats().Notifications.ToolsListChanged; n != 1 {
		t.Errorf("%d tools/list_changed for one change, want 1", n)
	}
}
