package driver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A GET stream that lives long (10,000 numbered notifications) is judged
// as it goes with bounded memory: one gap is one lost, a repeat one
// duplicated, one arriving far behind one reordered; the ledger never
// keeps more than 2 × seqWindow numbers or maxEventIDs event ids.
func TestLedgerLongStreamBounded(t *testing.T) {
	var l Ledger
	peakSeqs, peakIDs := 0, 0
	for n := int64(1); n <= 10000; n++ {
		if n == 2500 {
			continue // planted: lost
		}
		l.eventID([]byte("e" + fmtNum(float64(n))))
		l.seq(n)
		if n == 9990 {
			l.seq(9985) // planted: duplicated (within the window)
		}
		peakSeqs, peakIDs = max(peakSeqs, len(l.seqs)), max(peakIDs, len(l.ids))
	}
	l.seq(100) // planted: far behind, already judged
	l.finishSeq()
	got := VerdictMap(l.Counts)
	if d := cmp.Diff(map[string]int{"lost": 1, "duplicated": 1, "reordered": 1}, got); d != "" {
		t.Fatalf("verdicts (-want +got):\n%s evidence %q", d, l.Evidence)
	}
	if peakSeqs > 2*seqWindow || peakIDs > maxEventIDs {
		t.Fatalf("kept up to %d numbers and %d ids", peakSeqs, peakIDs)
	}
}

// A clean long stream stays clean, and a gap at its very end is found.
func TestLedgerLongStreamClean(t *testing.T) {
	var l Ledger
	for n := int64(1); n <= 5000; n++ {
		l.seq(n)
	}
	l.finishSeq()
	if l.Faulty() {
		t.Fatalf("clean stream judged %v", VerdictMap(l.Counts))
	}
	var g Ledger
	for n := int64(1); n <= 5000; n++ {
		if n != 4999 {
			g.seq(n)
		}
	}
	g.finishSeq()
	if got := VerdictMap(g.Counts); !cmp.Equal(got, map[string]int{"lost": 1}) {
		t.Fatalf("gap at the end: %v", got)
	}
}
