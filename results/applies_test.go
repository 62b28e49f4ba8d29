package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A merged run names each feature one segment found not applicable, once.
func TestMergeNotApplicableOncePerFeature(t *testing.T) {
	a := []NotApplicable{{Feature: "--check-deleted", Reason: "no session id"}}
	b := []NotApplicable{{Feature: "--check-deleted", Reason: "no session id (segment 2)"}, {Feature: "--get-stream", Reason: "GET 405"}}
	got := mergeNotApplicable(mergeNotApplicable(nil, a), b)
	want := []NotApplicable{{Feature: "--check-deleted", Reason: "no session id"}, {Feature: "--get-stream", Reason: "GET 405"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("merged (-want +got):\n%s", d)
	}
}
