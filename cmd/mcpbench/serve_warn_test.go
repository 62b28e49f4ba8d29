package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// serve --auth on an address that is not loopback warns, as serve without
// --auth does, and says what guards it; on loopback it stays quiet. The
// non-loopback server is only started and stopped: no traffic is sent.
func TestServeAuthWarnsOffLoopback(t *testing.T) {
	t.Setenv(authSecretEnv, "s3cret-for-test")
	for _, tt := range []struct {
		addr string
		want []string // nil: no warning
	}{
		{"0.0.0.0:0", []string{"WARNING: listening on ", "not a loopback address", "guarded only by --auth's test authorization server",
			"without --tls the client secret and the tokens cross the network in clear text", "--addr 127.0.0.1:PORT"}},
		{"127.0.0.1:0", nil},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			root := newRootCmd()
			var out, errb lockedBuffer
			root.SetOut(&out)
			root.SetErr(&errb)
			root.SetArgs([]string{"serve", "--addr", tt.addr, "--auth"})
			done := make(chan error, 1)
			go func() { done <- root.ExecuteContext(ctx) }()
			// The warning is written right after the "pid N; Ctrl-C to stop"
			// line, before serve waits: all written once it returns.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(out.String(), "Ctrl-C to stop") {
				select {
				case err := <-done:
					t.Fatalf("serve ended: %v\n%s\n%s", err, out.String(), errb.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("serve did not start in 10 s:\n%s\n%s", out.String(), errb.String())
				}
				time.Sleep(5 * time.Millisecond) // polling the output, with a deadline
			}
			cancel()
			<-done
			errs := errb.String()
			if tt.want == nil && strings.Contains(errs, "WARNING") {
				t.Errorf("a loopback server warned: %s", errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if strings.Contains(out.String()+errs, "s3cret-for-test") {
				t.Error("the client secret was printed")
			}
		})
	}
}
