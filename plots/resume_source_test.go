package plots

import (
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/results"
)

// The time-to-resume chart reads the summary's source (summary.hlog): a
// run whose 200 resumes were all of GET streams is drawn, not skipped as
// "no stream was resumed" beside a summary that says 200 resumes; a run
// without resumes (a correct server, no break) is still skipped.
func TestTimeToResumeReadsTheSummarysSource(t *testing.T) {
	h := results.NewHistogram()
	for i := range 200 {
		h.RecordValue(int64(1000 + 10*i)) // µs
	}
	res := &results.Results{Ops: []string{"tools/call:echo"}, Histograms: map[string]*hdr.Histogram{},
		Totals: map[string]*hdr.Histogram{results.TotalsGETResume: h, results.TotalsTag("tools/call:echo", "response"): h}}
	c, err := TimeToResume(res)
	if err != nil {
		t.Fatalf("200 GET-stream resumes in summary.hlog: %v", err)
	}
	// The percentile spectrum draws the GET streams' 200 resumes.
	var names []string
	for _, d := range c.Panels[1].drawn {
		names = append(names, d.name)
	}
	if !strings.Contains(strings.Join(names, "|"), "GET streams (resumes)") {
		t.Fatalf("series %q", names)
	}

	clean := &results.Results{Ops: []string{"tools/call:echo"}, Histograms: map[string]*hdr.Histogram{},
		Totals: map[string]*hdr.Histogram{results.TotalsTag("tools/call:echo", "response"): h}}
	if _, err := TimeToResume(clean); err == nil || !strings.Contains(err.Error(), "no stream was resumed") {
		t.Fatalf("no resume: %v", err)
	}
}
