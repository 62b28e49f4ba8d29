package driver_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"golang.org/x/net/http2"
)

// goAwayServer is an h2c server that answers the first request's HEADERS
// with GOAWAY (code, last stream lastID) and closes: what a server under
// load or shutting down does.
func goAwayServer(t *testing.T, code http2.ErrCode, lastID uint32) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for range 20 { // bounded
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				pre := make([]byte, len(http2.ClientPreface))
				if _, err := io.ReadFull(c, pre); err != nil || !bytes.Equal(pre, []byte(http2.ClientPreface)) {
					return
				}
				fr := http2.NewFramer(c, c)
				fr.WriteSettings()
				for range 10 {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					if _, ok := f.(*http2.HeadersFrame); ok {
						fr.WriteGoAway(lastID, code, []byte("overloaded"))
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A GOAWAY says so once, with its code, and whether the server took the
// request (RFC 9113 §6.8): refused on a new connection, a graceful
// shutdown, or the connection closed after the request was taken.
func TestGoAwaySaysSo(t *testing.T) {
	for _, tc := range []struct {
		code   http2.ErrCode
		lastID uint32
		want   string
	}{
		{http2.ErrCodeEnhanceYourCalm, 0, "refused the request with GOAWAY (ENHANCE_YOUR_CALM) before processing it"},
		{http2.ErrCodeNo, 0, "is closing the connection (graceful GOAWAY): the request was not processed"},
		{http2.ErrCodeProtocol, 1, `closed the connection with GOAWAY after taking the request, which it may have processed (LastStreamID=1, ErrCode=PROTOCOL_ERROR, debug="overloaded")`},
	} {
		addr := goAwayServer(t, tc.code, tc.lastID)
		cfg := &driver.Config{URL: "http://" + addr + "/mcp", HTTP: httpclient.HTTP2, RequestTimeout: 5 * time.Second}
		err := initErr(t, cfg)
		onceIn(t, err, tc.want)
		onceIn(t, err, "GOAWAY")
		if !errors.Is(err, httpclient.ErrGoAway) || driver.Classify(err) != driver.ClassTransport {
			t.Errorf("%v: want ErrGoAway, class transport (got %v)", err, driver.Classify(err))
		}
	}
}
