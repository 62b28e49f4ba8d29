package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Line is one line of the ground-truth log (JSON lines). Ev says what it
// records:
//
//   - "request": a request from the client (HTTP, Session, Method, RID,
//     LastEventID);
//   - "event": an event forwarded to the client (Stream, ID, Msg: progress,
//     response, request, notification or empty; RID or Token);
//   - "fault": a planted fault (Fault is its kind, What says what was done);
//   - "end": a stream's end (What: eof, fin, rst, client-gone or error).
//
// Stream numbers count the proxy's requests from 1.
type Line struct {
	T           float64 `json:"t"` // seconds since the proxy started
	Ev          string  `json:"ev"`
	Stream      int64   `json:"stream,omitempty"`
	StreamKind  string  `json:"kind,omitempty"` // post, get, resume, delete
	HTTP        string  `json:"http,omitempty"`
	Proto       string  `json:"proto,omitempty"` // the client's protocol: HTTP/1.1, HTTP/2.0`
	Session     string  `json:"session,omitempty"`
	Method      string  `json:"method,omitempty"`
	RID         string  `json:"rid,omitempty"`   // JSON-RPC id, raw JSON
	Token       string  `json:"token,omitempty"` // progress token, raw JSON
	LastEventID string  `json:"last_event_id,omitempty"`
	ID          string  `json:"id,omitempty"` // event id
	Msg         string  `json:"msg,omitempty"`
	Status      int     `json:"status,omitempty"`
	Fault       string  `json:"fault,omitempty"`
	What        string  `json:"what,omitempty"`
}

// logger writes Lines through a small buffer: memory is bounded whatever
// the traffic. Safe for concurrent use.
type logger struct {
	mu    sync.Mutex
	w     *bufio.Writer
	enc   *json.Encoder
	start time.Time
	err   error
}

func newLogger(w io.Writer, start time.Time) *logger {
	if w == nil {
		return nil
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	return &logger{w: bw, enc: json.NewEncoder(bw), start: start}
}

func (l *logger) log(ln Line) {
	if l == nil {
		return
	}
	ln.T = time.Since(l.start).Seconds()
	l.mu.Lock()
	if err := l.enc.Encode(&ln); err != nil && l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

func (l *logger) flush() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.Flush(); err != nil && l.err == nil {
		l.err = err
	}
	return l.err
}
