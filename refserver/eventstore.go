package refserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Accounting charges of the memory event store, in bytes. They stand for the
// bookkeeping that an event or an emptied stream costs beyond its data, so
// that the cap bounds the store's real memory (a priming event has no data).
const (
	eventOverhead  = 64
	streamOverhead = 128
)

// memoryEventStore is an [mcp.EventStore] bounded in bytes with O(1)
// amortized eviction of the globally oldest event.
//
// The SDK's [mcp.MemoryEventStore] walks every stream of every session on each
// Append once it is full, evicting the first event of each, and never forgets
// the streams of finished requests while their session lives. Under load
// (thousands of calls per second, 1000+ sessions) that makes Append cost grow
// with the number of requests ever served. This store keeps one FIFO of
// everything it holds instead:
//
//   - each Append queues an entry; eviction pops the oldest entry and drops the
//     first event of its stream (per-stream order equals global order, since
//     both are taken under one lock);
//   - a request stream emptied by eviction queues a tombstone charged
//     streamOverhead; when the tombstone reaches the head and the stream is
//     still empty, the stream is forgotten. An Append to a forgotten stream
//     (every stream is opened before its first Append) recreates it as purged,
//     so After reports [mcp.ErrEventsPurged] rather than replaying with wrong
//     indexes. The standalone stream ("") is never forgotten, so its index
//     survives any eviction;
//   - SessionClosed releases a session's bytes at once and marks its queue
//     entries dead; the queue is compacted when dead entries dominate.
//
// It is safe for concurrent use.
type memoryEventStore struct {
	mu       sync.Mutex
	maxBytes int
	nBytes   int
	sessions map[string]map[string]*eventLog // session ID → stream ID → log
	queue    []queueEntry                    // oldest first, from head
	head     int
	dead     int // entries in queue[head:] whose session is closed
}

var _ mcp.EventStore = (*memoryEventStore)(nil)

type eventLog struct {
	sessionID, streamID string
	first               int      // stream index of data[0]
	data                [][]byte // retained events, oldest first
	bytes               int      // charged bytes: events and pending tombstones
	tombs               int      // tombstones queued and not yet popped
	tombSeq             int      // sequence number of the newest tombstone
	purged              bool     // recreated after being forgotten: indexes unknown
	closed              bool     // session closed: queue entries are dead
}

// queueEntry is one stored event of log, or (tomb > 0) the tombstone with
// that sequence number.
type queueEntry struct {
	log  *eventLog
	tomb int
}

func newMemoryEventStore(maxBytes int) *memoryEventStore {
	return &memoryEventStore{
		maxBytes: maxBytes,
		sessions: make(map[string]map[string]*eventLog),
	}
}

// Open implements [mcp.EventStore].
func (s *memoryEventStore) Open(ctx context.Context, sessionID, streamID string) error {
	noteStream(ctx, sessionID, streamID) // Options.StreamLinks
	s.mu.Lock()
	defer s.mu.Unlock()
	streams := s.sessions[sessionID]
	if streams == nil {
		streams = make(map[string]*eventLog)
		s.sessions[sessionID] = streams
	}
	if streams[streamID] == nil {
		streams[streamID] = &eventLog{sessionID: sessionID, streamID: streamID}
	}
	return nil
}

// Append implements [mcp.EventStore]. The event is always retained, even if
// it alone exceeds the cap.
func (s *memoryEventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	streams := s.sessions[sessionID]
	if streams == nil {
		return fmt.Errorf("refserver event store: append to unknown session %q", sessionID)
	}
	l := streams[streamID]
	if l == nil {
		// Opened, then forgotten after eviction emptied it: the index of this
		// event is unknown, so the stream can no longer be replayed.
		l = &eventLog{sessionID: sessionID, streamID: streamID, purged: true}
		streams[streamID] = l
	}
	size := len(data) + eventOverhead
	for s.nBytes+size > s.maxBytes && s.evictOne() {
	}
	l.data = append(l.data, data)
	l.bytes += size
	s.nBytes += size
	s.queue = append(s.queue, queueEntry{log: l})
	return nil
}

// evictOne pops the oldest live queue entry and releases what it holds. It
// reports whether the queue had a live entry.
func (s *memoryEventStore) evictOne() bool {
	for s.head < len(s.queue) {
		e := s.queue[s.head]
		s.queue[s.head] = queueEntry{}
		s.head++
		l := e.log
		if l.closed {
			s.dead--
			continue
		}
		if e.tomb > 0 {
			l.tombs--
			l.bytes -= streamOverhead
			s.nBytes -= streamOverhead
			if e.tomb == l.tombSeq && len(l.data) == 0 {
				if streams := s.sessions[l.sessionID]; streams[l.streamID] == l {
					delete(streams, l.streamID)
				}
			}
		} else {
			size := len(l.data[0]) + eventOverhead
			l.data[0] = nil
			l.data = l.data[1:]
			l.first++
			l.bytes -= size
			s.nBytes -= size
			if len(l.data) == 0 && l.streamID != "" {
				l.tombs++
				l.tombSeq++
				l.bytes += streamOverhead
				s.nBytes += streamOverhead
				s.queue = append(s.queue, queueEntry{log: l, tomb: l.tombSeq})
			}
		}
		s.compact()
		return true
	}
	return false
}

// compact drops the consumed prefix of the queue, and dead entries when they
// are the majority, keeping both amortized O(1).
func (s *memoryEventStore) compact() {
	live := len(s.queue) - s.head
	if s.head > 1024 && s.head > live {
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue = s.queue[:n]
		s.head = 0
	}
	if s.dead > 1024 && s.dead > live/2 {
		q := s.queue[:0]
		for _, e := range s.queue[s.head:] {
			if !e.log.closed {
				q = append(q, e)
			}
		}
		clear(s.queue[len(q):])
		s.queue = q
		s.head = 0
		s.dead = 0
	}
}

// After implements [mcp.EventStore].
func (s *memoryEventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	data, err := s.after(sessionID, streamID, index)
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range data {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func (s *memoryEventStore) after(sessionID, streamID string, index int) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	streams, ok := s.sessions[sessionID]
	if !ok {
		return nil, fmt.Errorf("refserver event store: unknown session %q", sessionID)
	}
	l, ok := streams[streamID]
	if !ok {
		return nil, fmt.Errorf("refserver event store: stream %q of session %q: %w (or never existed)",
			streamID, sessionID, mcp.ErrEventsPurged)
	}
	start := index + 1 - l.first
	if l.purged || start < 0 {
		return nil, fmt.Errorf("refserver event store: stream %q of session %q after index %d: %w",
			streamID, sessionID, index, mcp.ErrEventsPurged)
	}
	if start >= len(l.data) {
		return nil, nil
	}
	return slices.Clone(l.data[start:]), nil
}

// SessionClosed implements [mcp.EventStore].
func (s *memoryEventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.sessions[sessionID] {
		l.closed = true
		s.nBytes -= l.bytes
		s.dead += len(l.data) + l.tombs
		l.data = nil
	}
	delete(s.sessions, sessionID)
	s.compact()
	return nil
}

// standaloneFirst returns the index of the oldest retained event of the
// session's standalone stream (equal to the number of events ever stored on
// it when none is retained), and whether the session is known.
func (s *memoryEventStore) standaloneFirst(sessionID string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.sessions[sessionID][""]
	if l == nil {
		return 0, false
	}
	return l.first, true
}

// primed reports whether a stream of the session opened with a priming
// event (index 0, no data) still retained: a resume from its start replays
// everything after index 0 (Options.StreamLinks).
func (s *memoryEventStore) primed(sessionID, streamID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.sessions[sessionID][streamID]
	return l != nil && !l.purged && l.first == 0 && len(l.data) > 0 && len(l.data[0]) == 0
}

// usage returns the charged bytes and the number of sessions, for tests.
func (s *memoryEventStore) usage() (bytes, sessions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nBytes, len(s.sessions)
}

// isPurged reports whether err says that events were evicted, for tests.
func isPurged(err error) bool { return errors.Is(err, mcp.ErrEventsPurged) }
