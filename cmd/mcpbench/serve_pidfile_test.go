package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestServePIDFileAndOrigins(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "serve.pid")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	root := newRootCmd()
	var out, errb lockedBuffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs([]string{"serve", "--addr", "127.0.0.1:0", "--pid-file", pidFile, "--allow-origin", "https://app.example"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	deadline := time.Now().Add(10 * time.Second)
	var data []byte
	for {
		var err error
		if data, err = os.ReadFile(pidFile); err == nil && bytes.HasSuffix(data, []byte("\n")) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid file after 10 s; stdout %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := strings.TrimSpace(string(data)); got != strconv.Itoa(os.Getpid()) {
		t.Fatalf("pid file holds %q, want %d", got, os.Getpid())
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(out.String())
	if url == "" || strings.Contains(errb.String(), "WARNING") {
		t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
	}
	for origin, want := range map[string]int{"http://evil.example": http.StatusForbidden, "https://app.example": http.StatusOK, "": http.StatusOK} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %q: HTTP %d, want %d", origin, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Fatalf("pid file left after exit: %v", err)
	}
}

func TestServeBadAllowOrigin(t *testing.T) {
	_, errs, code := cli(t.Context(), "serve", "--addr", "127.0.0.1:0", "--allow-origin", "evil.example")
	if code != exitUsage || !strings.Contains(errs, `AllowedOrigins: "evil.example"`) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
