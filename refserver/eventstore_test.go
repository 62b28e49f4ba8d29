package refserver

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// collect returns the events After yields, as strings, and its error.
func collect(s *memoryEventStore, session, stream string, index int) ([]string, error) {
	var got []string
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return got, err
		}
		got = append(got, string(d))
	}
	return got, nil
}

// checkAccounting recomputes the charged bytes from the store's contents.
func checkAccounting(t *testing.T, s *memoryEventStore) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for _, streams := range s.sessions {
		for _, l := range streams {
			want := l.tombs * streamOverhead
			for _, d := range l.data {
				want += len(d) + eventOverhead
			}
			if l.bytes != want {
				t.Errorf("stream %q/%q charged %d bytes, holds %d", l.sessionID, l.streamID, l.bytes, want)
			}
			total += want
		}
	}
	if s.nBytes != total {
		t.Errorf("store charged %d bytes, holds %d", s.nBytes, total)
	}
	dead := 0
	for _, e := range s.queue[s.head:] {
		if e.log.closed {
			dead++
		}
	}
	if dead != s.dead {
		t.Errorf("store counts %d dead entries, queue has %d", s.dead, dead)
	}
}

func TestEventStoreReplay(t *testing.T) {
	ctx := context.Background()
	s := newMemoryEventStore(1 << 20)
	if err := s.Open(ctx, "S", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(ctx, "S", "a"); err != nil {
		t.Fatal(err)
	}
	s.Append(ctx, "S", "a", nil) // priming event: index 0, no data
	for i := 1; i <= 3; i++ {
		s.Append(ctx, "S", "a", []byte("a"+strconv.Itoa(i)))
	}
	for _, tc := range []struct {
		index int
		want  []string
	}{
		{-1, []string{"", "a1", "a2", "a3"}},
		{0, []string{"a1", "a2", "a3"}},
		{2, []string{"a3"}},
		{3, nil},
		{7, nil},
	} {
		got, err := collect(s, "S", "a", tc.index)
		if err != nil {
			t.Fatalf("After(%d): %v", tc.index, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("After(%d) (-want +got):\n%s", tc.index, diff)
		}
	}
	if _, err := collect(s, "S", "nope", 0); err == nil {
		t.Error("After on an unknown stream: no error")
	}
	if _, err := collect(s, "T", "a", 0); err == nil {
		t.Error("After on an unknown session: no error")
	}
	if err := s.Append(ctx, "T", "a", []byte("x")); err == nil {
		t.Error("Append to an unknown session: no error")
	}
	checkAccounting(t, s)
}

func TestEventStoreEvictsOldestFirst(t *testing.T) {
	ctx := context.Background()
	const ev = 10 + eventOverhead // every event below has 10 bytes
	s := newMemoryEventStore(4 * ev)
	s.Open(ctx, "S", "")
	s.Open(ctx, "S", "a")
	s.Open(ctx, "S", "b")
	s.Append(ctx, "S", "a", []byte("a000000001")) // a_0
	s.Append(ctx, "S", "", []byte("g000000001"))  // _0
	s.Append(ctx, "S", "b", []byte("b000000001")) // b_0
	s.Append(ctx, "S", "a", []byte("a000000002")) // a_1
	checkAccounting(t, s)

	// Full: the next append evicts a_0, the oldest event of the process.
	s.Append(ctx, "S", "", []byte("g000000002")) // _1
	if _, err := collect(s, "S", "a", -1); !isPurged(err) {
		t.Errorf("After(a, -1) after eviction: err = %v, want ErrEventsPurged", err)
	}
	if got, err := collect(s, "S", "a", 0); err != nil || !cmp.Equal(got, []string{"a000000002"}) {
		t.Errorf("After(a, 0) = %q, %v; want [a000000002]", got, err)
	}
	// Then _0: the standalone stream keeps its indexes.
	s.Append(ctx, "S", "b", []byte("b000000002"))
	if first, ok := s.standaloneFirst("S"); !ok || first != 1 {
		t.Errorf("standaloneFirst = %d, %v; want 1, true", first, ok)
	}
	if got, err := collect(s, "S", "", 0); err != nil || !cmp.Equal(got, []string{"g000000002"}) {
		t.Errorf("After(\"\", 0) = %q, %v; want [g000000002]", got, err)
	}
	checkAccounting(t, s)
}

func TestEventStoreForgetsEmptiedStreams(t *testing.T) {
	ctx := context.Background()
	const ev = 10 + eventOverhead
	s := newMemoryEventStore(3*ev + streamOverhead)
	s.Open(ctx, "S", "")
	s.Open(ctx, "S", "old")
	s.Open(ctx, "S", "new")
	s.Append(ctx, "S", "old", []byte("o000000001"))
	for i := range 3 {
		s.Append(ctx, "S", "new", fmt.Appendf(nil, "n%09d", i))
	}
	// Evicting old's only event queues a tombstone for old.
	s.Append(ctx, "S", "new", []byte("n000000003"))
	checkAccounting(t, s)
	if _, err := collect(s, "S", "old", -1); !isPurged(err) {
		t.Errorf("After(old, -1) with its events evicted: err = %v, want ErrEventsPurged", err)
	}
	if got, err := collect(s, "S", "old", 0); err != nil || got != nil {
		t.Errorf("After(old, 0) = %q, %v; want nothing to replay", got, err)
	}
	// The tombstone is queued behind new's events: popping it forgets old.
	for i := 4; i <= 6; i++ {
		s.Append(ctx, "S", "new", fmt.Appendf(nil, "n%09d", i))
	}
	s.mu.Lock()
	_, kept := s.sessions["S"]["old"]
	s.mu.Unlock()
	if kept {
		t.Fatal("emptied stream still kept after its tombstone was popped")
	}
	checkAccounting(t, s)
	// A late append to the forgotten stream cannot be replayed: its index is
	// unknown.
	s.Append(ctx, "S", "old", []byte("o000000002"))
	if _, err := collect(s, "S", "old", 1); !isPurged(err) {
		t.Errorf("After on a recreated stream: err = %v, want ErrEventsPurged", err)
	}
	checkAccounting(t, s)
}

func TestEventStoreSessionClosed(t *testing.T) {
	ctx := context.Background()
	s := newMemoryEventStore(1 << 30)
	for i := range 3000 {
		id := strconv.Itoa(i)
		s.Open(ctx, id, "")
		s.Open(ctx, id, "a")
		s.Append(ctx, id, "a", nil)
		s.Append(ctx, id, "a", []byte("response"))
		s.Append(ctx, id, "", []byte("tick"))
		if i%2 == 0 {
			s.SessionClosed(ctx, id)
		}
	}
	checkAccounting(t, s)
	if _, sessions := s.usage(); sessions != 1500 {
		t.Errorf("%d sessions kept, want 1500", sessions)
	}
	for i := 1; i < 3000; i += 2 {
		s.SessionClosed(ctx, strconv.Itoa(i))
	}
	checkAccounting(t, s)
	if bytes, sessions := s.usage(); bytes != 0 || sessions != 0 {
		t.Errorf("after closing every session: %d bytes, %d sessions; want 0, 0", bytes, sessions)
	}
	s.mu.Lock()
	queued := len(s.queue) - s.head
	s.mu.Unlock()
	if queued > 2*1024 {
		t.Errorf("queue holds %d dead entries, want it compacted", queued)
	}
}

func TestEventStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	s := newMemoryEventStore(50 * (eventOverhead + 20))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			session := strconv.Itoa(g)
			s.Open(ctx, session, "")
			for i := range 500 {
				stream := strconv.Itoa(i % 7)
				s.Open(ctx, session, stream)
				s.Append(ctx, session, stream, []byte("some event data"))
				s.Append(ctx, session, "", []byte("tick"))
				for range s.After(ctx, session, "", i-3) {
				}
			}
			s.SessionClosed(ctx, session)
		})
	}
	wg.Wait()
	checkAccounting(t, s)
	if bytes, sessions := s.usage(); bytes != 0 || sessions != 0 {
		t.Errorf("after closing every session: %d bytes, %d sessions; want 0, 0", bytes, sessions)
	}
}
