package results

import (
	"sync/atomic"
	"time"
)

// AddLink counts one storm-caused reconnect attempt made at t that went to
// the stream's rel="stream" URL (SEP-1335); Record calls it, and counts the
// attempt itself. Safe for concurrent use.
func (tl *Timeline) AddLink(t time.Time) {
	if tl == nil {
		return
	}
	tl.linkOnce.Do(func() { tl.link = make([]atomic.Int64, len(tl.all)) })
	i := int(t.Sub(tl.start) / tl.bin)
	if i < 0 || i >= len(tl.link) {
		return
	}
	tl.link[i].Add(1)
}

// LinksIn returns the attempts in bins [from, to) that went to a
// rel="stream" URL. Call it once the attempts are recorded.
func (tl *Timeline) LinksIn(from, to int) int64 {
	if tl == nil {
		return 0
	}
	tl.linkOnce.Do(func() { tl.link = make([]atomic.Int64, len(tl.all)) }) // none added: zeros
	var n int64
	for i := max(from, 0); i < min(to, len(tl.link)); i++ {
		n += tl.link[i].Load()
	}
	return n
}
