package driver_test

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"golang.org/x/net/http2"
)

// A server that sends GOAWAY as soon as the handshake is done, before any
// request: whichever of net/http's errors the client meets (the GOAWAY
// read first, or the connection found closed before its first request),
// the error says what the server did, never net/http's bare "client conn
// could not be established" or "client conn not usable".
func TestGoAwayRightAfterHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for range 50 { // bounded: net/http retries a request the GOAWAY left unprocessed
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
				fr.WriteGoAway(0, http2.ErrCodeNo, []byte("at the connection limit"))
				io.Copy(io.Discard, c) // until the client closes (a close now could reset what it wrote)
			}()
		}
	}()
	cfg := &driver.Config{URL: "http://" + ln.Addr().String() + "/mcp", HTTP: httpclient.HTTP2, RequestTimeout: 5 * time.Second}
	err = initErr(t, cfg)
	if msg := err.Error(); strings.Contains(msg, "http2: client conn") || !strings.Contains(msg, "GOAWAY") || driver.Classify(err) != driver.ClassTransport {
		t.Fatalf("%q (class %v): want the server's GOAWAY said in words, class transport", msg, driver.Classify(err))
	}
	t.Log(err)
}
