package proxy

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"strings"
	"testing"
)

// The pipeline's cost per event: decode, classify, re-encode and log
// (to io.Discard) one progress or response event of a POST's SSE answer.
func BenchmarkPipeEvent(b *testing.B) {
	for _, logged := range []bool{false, true} {
		name := "nolog"
		if logged {
			name = "log"
		}
		b.Run(name, func(b *testing.B) {
			up, _ := url.Parse("http://127.0.0.1:1/mcp")
			cfg := Config{Upstream: up}
			if logged {
				cfg.Log = io.Discard
			}
			p, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			var in strings.Builder
			const perStream = 100
			in.WriteString("id: 0\ndata: \n\n")
			for i := range perStream - 1 {
				if i == perStream-2 {
					in.WriteString("id: r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n")
					break
				}
				in.WriteString("id: e\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"run-1-7\",\"progress\":3,\"total\":100}}\n\n")
			}
			data := []byte(in.String())
			b.SetBytes(int64(len(data)) / perStream)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += perStream {
				s := &stream{p: p, idx: 1, kind: TargetPOST, ctx: context.Background(), killed: make(chan struct{})}
				pp := s.newPipe(io.NopCloser(bytes.NewReader(data)))
				if _, err := io.Copy(io.Discard, pp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
