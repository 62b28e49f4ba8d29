package driver_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
)

// rawServer is a minimal HTTP/1.1 MCP server for the client-only
// benchmarks: it reads requests with the connection's buffers and writes
// canned answers (initialize, 202 to notifications, a tools/call result
// as SSE — priming event and response, chunked like net/http's — or as
// JSON) without allocating per request, so that the allocations a
// benchmark counts are the client's alone.
type rawServer struct {
	l     net.Listener
	json  bool
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startRawServer(tb testing.TB, json bool) *rawServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &rawServer{l: l, json: json}
	s.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() { s.serve(c) })
		}
	})
	tb.Cleanup(func() {
		l.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close() // the client's kept-alive connections
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url() string { return "http://" + s.l.Addr().String() + "/mcp" }

func (s *rawServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 8192)
	bw := bufio.NewWriterSize(c, 8192)
	body := make([]byte, 0, 8192)
	payload := make([]byte, 0, 1024)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		post := bytes.HasPrefix(line, []byte("POST "))
		n := 0
		for {
			h, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(bytes.TrimSpace(h)) == 0 {
				break
			}
			if len(h) > 15 && bytes.EqualFold(h[:15], []byte("Content-Length:")) {
				n, _ = strconv.Atoi(string(bytes.TrimSpace(h[15:])))
			}
		}
		if n > cap(body) {
			return
		}
		body = body[:n]
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		switch {
		case !post:
			bw.WriteString("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		case bytes.Contains(body, []byte(`"notifications/`)):
			bw.WriteString("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
		default:
			s.answer(bw, body, payload[:0])
		}
		if err := bw.Flush(); err != nil {
			return
		}
	}
}

// answer writes the answer to the request body (a result echoing its id).
func (s *rawServer) answer(bw *bufio.Writer, body, p []byte) {
	id := body[bytes.Index(body, []byte(`"id":`))+5:]
	id = id[:bytes.IndexByte(id, ',')]
	msg := func(p []byte) []byte {
		p = append(p, `{"jsonrpc":"2.0","id":`...)
		p = append(p, id...)
		return append(p, `,"result":{"protocolVersion":"2025-11-25","content":[{"type":"text","text":"hello"}]}}`...)
	}
	bw.WriteString("HTTP/1.1 200 OK\r\nDate: Thu, 26 Nov 2026 02:00:00 GMT\r\n")
	if bytes.Contains(body, []byte(`"initialize"`)) {
		bw.WriteString("Mcp-Session-Id: bench\r\n")
	}
	if s.json {
		p = msg(p)
		bw.WriteString("Content-Type: application/json\r\nContent-Length: ")
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(len(p)), 10))
		bw.WriteString("\r\n\r\n")
		bw.Write(p)
		return
	}
	p = append(p, "event: prime\nid: e_0\ndata:\n\nevent: message\nid: e_1\ndata: "...)
	p = msg(p)
	p = append(p, "\n\n"...)
	bw.WriteString("Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
	bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(len(p)), 16))
	bw.WriteString("\r\n")
	bw.Write(p)
	bw.WriteString("\r\n0\r\n\r\n")
}

// BenchmarkToolsCallSSEClient is BenchmarkToolsCallSSE against rawServer,
// which allocates nothing per request: the allocations are the client's.
func BenchmarkToolsCallSSEClient(b *testing.B) {
	srv := startRawServer(b, false)
	benchCalls(b, benchSession(b, &driver.Config{URL: srv.url()}))
}

// BenchmarkToolsCallJSONClient: the same with application/json answers.
func BenchmarkToolsCallJSONClient(b *testing.B) {
	srv := startRawServer(b, true)
	benchCalls(b, benchSession(b, &driver.Config{URL: srv.url()}))
}
