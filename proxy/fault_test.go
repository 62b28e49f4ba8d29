package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseFault(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want Fault
	}{
		{"drop target=progress at=1 p=0.5", Fault{Kind: KindDrop, Target: TargetAny, Event: EventProgress, At: 1, P: 0.5}},
		{"drop", Fault{Kind: KindDrop, Target: TargetPOST, Event: EventProgress, P: 1}},
		{"duplicate target=get event=any id=strip", Fault{Kind: KindDuplicate, Target: TargetGET, Event: EventAny, Strip: true, P: 1}},
		{"inject from=other target=tools/call", Fault{Kind: KindInject, Target: "tools/call", Event: EventProgress, From: "other", P: 1}},
		{"drop-response", Fault{Kind: KindDropResponse, Target: TargetPOST, Event: EventResponse, P: 1}},
		{"cut after=2 close=fin", Fault{Kind: KindCut, Target: TargetPOST, Event: EventProgress, After: 2, Close: CloseFIN, P: 1}},
		{"cut mid=0", Fault{Kind: KindCut, Target: TargetPOST, Event: EventProgress, Mid: 0, P: 1}},
		{"cut before_id target=resume", Fault{Kind: KindCut, Target: TargetResume, Event: EventProgress, BeforeID: true, P: 1}},
		{"stall after=1 for=2s", Fault{Kind: KindStall, Target: TargetPOST, Event: EventProgress, After: 1, For: 2 * time.Second, P: 1}},
		{"retry retry=none", Fault{Kind: KindRetry, Target: TargetPOST, Event: EventProgress, Retry: -1, P: 1}},
		{"replay mode=too-much n=2", Fault{Kind: KindReplay, Target: TargetResume, Event: EventProgress, Mode: ReplayTooMuch, N: 2, P: 1}},
		{"status code=429 retry_after=5 target=get p=0.1", Fault{Kind: KindStatus, Target: TargetGET, Event: EventProgress, Code: 429, RetryAfter: 5, P: 0.1}},
		{"storm at=10s every=30s close=fin", Fault{Kind: KindStorm, Target: TargetGET, Event: EventProgress, StormAt: 10 * time.Second, Every: 30 * time.Second, Close: CloseFIN, P: 1}},
	} {
		got, err := ParseFault(tt.spec)
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		w := tt.want
		if w.Mid == 0 && !strings.Contains(tt.spec, "mid=") {
			w.Mid = -1
		}
		if w.RetryAfter == 0 {
			w.RetryAfter = -1
		}
		if w.Close == "" {
			w.Close = CloseRST
		}
		if w.N == 0 {
			w.N = 1
		}
		if diff := cmp.Diff(w, got, cmpopts.IgnoreUnexported(Fault{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.spec, diff)
		}
		if got.String() != tt.spec {
			t.Errorf("%q: String() %q", tt.spec, got.String())
		}
	}
}

// A bad spec is an error naming the word at fault and why.
func TestParseFaultErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                               "empty spec",
		"explode":                        `unknown kind "explode"; want one of drop, duplicate, swap`,
		"drop p=0":                       "p=0: want a probability in (0, 1]",
		"drop p=x":                       "p=x: invalid syntax",
		"drop at=-1":                     "at=-1: want a count ≥ 0",
		"drop wobble=1":                  `unknown key "wobble"`,
		"drop at":                        `"at": want key=value`,
		"drop at=1 at=2":                 "at given twice",
		"drop after=1":                   "drop takes no after= (its keys: target, p, event, at)",
		"drop event=everything":          "event=everything: want progress, response or any",
		"drop target=nowhere":            "target=nowhere: want post, get, resume, any, progress, response or a JSON-RPC method",
		"cut":                            "cut needs exactly one of after=N, mid=N, before_id (got 0)",
		"cut after=1 mid=1":              "(got 2)",
		"cut after=1 close=slam":         "close=slam: want fin or rst",
		"stall after=1":                  "stall needs for=",
		"stall for=0s":                   "for=0s: want a duration > 0",
		"delay delay=fast":               "delay=fast",
		"retry":                          "retry needs retry=",
		"retry retry=-5":                 "retry=-5: want ms ≥ 0, or none to remove hints",
		"duplicate id=maybe":             "id=maybe: want keep or strip",
		"inject from=mars":               "from=mars: want session",
		"replay":                         "replay needs mode=",
		"replay mode=again":              "mode=again: want too-much, too-little, wrong-place or silent",
		"replay mode=silent target=post": "replay acts on resumes only (target=resume)",
		"status code=500":                "code=500: want 404, 429 or 503",
		"status code=404 retry_after=3":  "only 429 and 503 carry Retry-After",
		"storm":                          "storm needs at=",
		"storm at=soon":                  "at=soon",
		"storm at=1s target=post":        "a storm closes GET streams (target=get)",
	} {
		_, err := ParseFault(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", spec, err, want)
		}
		if spec != "" && err != nil && !strings.Contains(err.Error(), `fault "`+strings.Join(strings.Fields(spec), " ")+`"`) {
			t.Errorf("%q: error %v does not quote the spec", spec, err)
		}
	}
}

func TestAppendEvent(t *testing.T) {
	got := string(appendEvent(nil, []byte("7"), true, []byte("message"), []byte("{\"a\":1}\n{\"b\":2}"), 1500))
	want := "id: 7\nretry: 1500\nevent: message\ndata: {\"a\":1}\ndata: {\"b\":2}\n\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := string(appendEvent(nil, []byte("p"), true, nil, nil, -1)); got != "id: p\ndata: \n\n" {
		t.Fatalf("priming event %q", got)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": true, "127.1.2.3:80": true, "[::1]:9": true, "localhost:9": true,
		"0.0.0.0:9": false, ":9": false, "[::]:9": false, "10.0.0.1:9": false, "example.com:9": false} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
}
