package proxy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/units"
)

// Kind is what a fault does.
type Kind string

// Fault kinds. Event faults (drop, duplicate, swap, inject) act on one
// event of each stream they pick (the at=K-th event their target selects);
// stream faults act on the stream as a whole.
const (
	KindDrop         Kind = "drop"          // leave one event out
	KindDuplicate    Kind = "duplicate"     // forward one event twice (id=keep or id=strip on the copy)
	KindSwap         Kind = "swap"          // forward one event after the next event of its kind
	KindInject       Kind = "inject"        // forward a recent progress event of another stream (from=session or from=other)
	KindHoldProgress Kind = "hold-progress" // hold the stream's progress until after its response
	KindDropResponse Kind = "drop-response" // leave the stream's response out
	KindCut          Kind = "cut"           // end the stream: after=N events, mid=N (inside event N+1) or before_id
	KindStall        Kind = "stall"         // stop forwarding for=D after N events
	KindDelay        Kind = "delay"         // hold each event back delay=D
	KindKeepOpen     Kind = "keep-open"     // keep the stream open after its response (for=D, default until the client leaves)
	KindRetry        Kind = "retry"         // rewrite retry hints (retry=MS) or remove them (retry=none)
	KindReplay       Kind = "replay"        // on resume: mode=too-much, too-little, wrong-place or silent
	KindStatus       Kind = "status"        // answer code=404, 429 or 503 (retry_after=S) without forwarding
	KindStorm        Kind = "storm"         // close every open GET stream at=D (then every=D)
)

var kinds = []Kind{KindDrop, KindDuplicate, KindSwap, KindInject, KindHoldProgress, KindDropResponse, KindCut, KindStall,
	KindDelay, KindKeepOpen, KindRetry, KindReplay, KindStatus, KindStorm}

// Stream targets: which requests' streams a fault may pick. A target with a
// "/" or one of the other words is a JSON-RPC method (POSTs of it).
const (
	TargetPOST   = "post"   // POST answers (JSON or SSE)
	TargetGET    = "get"    // standalone GET streams (no Last-Event-ID)
	TargetResume = "resume" // GETs with Last-Event-ID
	TargetAny    = "any"    // every stream
)

// Event targets: which events of a stream an event fault picks.
const (
	EventProgress = "progress" // notifications/progress
	EventResponse = "response" // a JSON-RPC response
	EventAny      = "any"      // any event carrying a message
)

// Close is how a cut ends a stream.
type Close string

// Closes: FIN ends the response in order (the client reads the end of the
// stream); RST aborts it (HTTP/1.1: the connection closes without the
// last chunk; HTTP/2: RST_STREAM).
const (
	CloseFIN Close = "fin"
	CloseRST Close = "rst"
)

// Replay modes of KindReplay.
const (
	ReplayTooMuch    = "too-much"    // resume from back=N events before the client's Last-Event-ID
	ReplayTooLittle  = "too-little"  // skip the first n=N replayed events
	ReplayWrongPlace = "wrong-place" // resume from the last event id of another stream of the session
	ReplaySilent     = "silent"      // accept the resume (200, text/event-stream) and send nothing
)

// Fault is one planted fault of the proxy's plan. The zero values of the
// optional fields are their defaults (see ParseFault).
type Fault struct {
	Kind Kind
	// Target selects streams: post, get, resume, any, or a JSON-RPC method
	// (the POSTs of that method). "" means the kind's default (resume for
	// replay, get for storm, post otherwise).
	Target string
	// Event selects the events of an event fault: progress, response or
	// any. "" means progress (response for drop-response).
	Event string
	// P is the probability that a stream the target selects meets the
	// fault, in (0, 1]; 0 means 1.
	P float64
	// At picks the event of an event fault: the At-th (0-based) event that
	// Event selects.
	At int
	// After is the number of events forwarded before a cut or stall.
	After int
	// Mid cuts inside event Mid+1 (after Mid complete events); -1 when unset.
	Mid int
	// BeforeID cuts before the first event carrying an id.
	BeforeID bool
	// Close ends a cut or storm: fin or rst; "" means rst.
	Close Close
	// For is how long a stall, keep-open or silent replay lasts; 0 means
	// until the client leaves (stall: required).
	For time.Duration
	// Delay holds each event back (delay).
	Delay time.Duration
	// Retry is the retry hint in ms a retry fault writes; -1 removes hints.
	Retry int
	// Strip makes a duplicate's copy carry no id (id=strip).
	Strip bool
	// From is where an injected event comes from: session (another stream
	// of the same session) or other (another session); "" means session.
	From string
	// Mode is a replay's mode.
	Mode string
	// N is how many replayed events too-little skips, or how many events
	// too-much goes back; 0 means 1.
	N int
	// Code is a status fault's HTTP status (404, 429 or 503).
	Code int
	// RetryAfter is a 429/503's Retry-After in seconds (-1: none).
	RetryAfter int
	// Every repeats a storm; 0 means once.
	Every time.Duration
	// StormAt is when a storm first fires, since the proxy started (at=D).
	StormAt time.Duration

	spec string
}

// String is the spec the fault was parsed from.
func (f *Fault) String() string { return f.spec }

// ParseFault parses one --fault spec: a kind followed by key=value words,
// e.g.
//
//	drop target=progress at=1 p=0.5
//	duplicate target=progress id=strip
//	swap target=progress
//	inject from=other
//	hold-progress target=tools/call
//	drop-response
//	cut after=2 close=fin | cut mid=1 | cut before_id
//	stall after=1 for=2s
//	delay delay=20ms target=get
//	keep-open for=5s
//	retry retry=5000 | retry retry=none
//	replay mode=too-much back=1 | replay mode=silent for=10s
//	status code=503 retry_after=2 target=tools/call p=0.1
//	storm at=10s every=30s close=fin
//
// target= takes post, get, resume, any, a JSON-RPC method, or progress or
// response (shorthand for event=progress or event=response on any
// stream). The error names the word at fault and why.
func ParseFault(spec string) (Fault, error) {
	words := strings.Fields(spec)
	if len(words) == 0 {
		return Fault{}, errors.New("fault: empty spec; want a kind and key=value words, e.g. \"drop target=progress p=0.5\"")
	}
	f := Fault{Kind: Kind(words[0]), Mid: -1, RetryAfter: -1, spec: strings.Join(words, " ")}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("fault %q: "+format, append([]any{f.spec}, args...)...)
	}
	valid := false
	for _, k := range kinds {
		valid = valid || k == f.Kind
	}
	if !valid {
		return f, bad("unknown kind %q; want one of %s", f.Kind, kindList())
	}
	seen := map[string]bool{}
	for _, w := range words[1:] {
		k, v, hasValue := strings.Cut(w, "=")
		if seen[k] {
			return f, bad("%s given twice", k)
		}
		seen[k] = true
		if !hasValue && k != "before_id" {
			return f, bad("%q: want key=value", w)
		}
		var err error
		switch k {
		case "target":
			f.Target = v
			if v == EventProgress || v == EventResponse {
				f.Target, f.Event = TargetAny, v
			}
		case "event":
			f.Event = v
		case "p":
			f.P, err = strconv.ParseFloat(v, 64)
			if err == nil && (f.P <= 0 || f.P > 1) {
				err = errors.New("want a probability in (0, 1]")
			}
		case "at", "after", "mid", "n", "back":
			if k == "at" && f.Kind == KindStorm {
				f.StormAt, err = units.ParseDuration(v)
				break
			}
			var n int
			n, err = strconv.Atoi(v)
			if err == nil && n < 0 {
				err = errors.New("want a count ≥ 0")
			}
			switch k {
			case "at":
				f.At = n
			case "after":
				f.After = n
			case "mid":
				f.Mid = n
			default:
				f.N = n
			}
		case "before_id":
			f.BeforeID = true
		case "close":
			f.Close = Close(v)
			if f.Close != CloseFIN && f.Close != CloseRST {
				err = errors.New("want fin or rst")
			}
		case "for", "delay", "every":
			var d time.Duration
			d, err = units.ParseDuration(v)
			if err == nil && d <= 0 {
				err = errors.New("want a duration > 0")
			}
			switch k {
			case "for":
				f.For = d
			case "delay":
				f.Delay = d
			default:
				f.Every = d
			}
		case "retry":
			if v == "none" {
				f.Retry = -1
			} else if f.Retry, err = strconv.Atoi(v); err == nil && f.Retry < 0 {
				err = errors.New("want ms ≥ 0, or none to remove hints")
			}
		case "id":
			if v != "keep" && v != "strip" {
				err = errors.New("want keep or strip")
			}
			f.Strip = v == "strip"
		case "from":
			f.From = v
			if v != "session" && v != "other" {
				err = errors.New("want session (another stream of the same session) or other (another session)")
			}
		case "mode":
			f.Mode = v
			if v != ReplayTooMuch && v != ReplayTooLittle && v != ReplayWrongPlace && v != ReplaySilent {
				err = errors.New("want too-much, too-little, wrong-place or silent")
			}
		case "code":
			f.Code, err = strconv.Atoi(v)
			if err == nil && f.Code != 404 && f.Code != 429 && f.Code != 503 {
				err = errors.New("want 404, 429 or 503")
			}
		case "retry_after":
			f.RetryAfter, err = strconv.Atoi(v)
			if err == nil && f.RetryAfter < 0 {
				err = errors.New("want seconds ≥ 0")
			}
		default:
			return f, bad("unknown key %q; see --help for the keys of %s", k, f.Kind)
		}
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) {
				err = ne.Err
			}
			return f, bad("%s=%s: %v", k, v, err)
		}
	}
	return f, f.check(seen, bad)
}

// check validates the keys a kind needs and fills defaults.
func (f *Fault) check(seen map[string]bool, bad func(string, ...any) error) error {
	if f.P == 0 {
		f.P = 1
	}
	if f.Close == "" {
		f.Close = CloseRST
	}
	if f.Target == "" {
		switch f.Kind {
		case KindReplay:
			f.Target = TargetResume
		case KindStorm:
			f.Target = TargetGET
		default:
			f.Target = TargetPOST
		}
	}
	if f.Event == "" {
		f.Event = EventProgress
		if f.Kind == KindDropResponse {
			f.Event = EventResponse
		}
	}
	if f.Event != EventProgress && f.Event != EventResponse && f.Event != EventAny {
		return bad("event=%s: want progress, response or any", f.Event)
	}
	if f.Target != TargetAny && f.Target != TargetPOST && f.Target != TargetGET && f.Target != TargetResume && !strings.Contains(f.Target, "/") && f.Target != "initialize" && f.Target != "ping" {
		return bad("target=%s: want post, get, resume, any, progress, response or a JSON-RPC method (e.g. tools/call)", f.Target)
	}
	need := func(keys ...string) error {
		for _, k := range keys {
			if !seen[k] {
				return bad("%s needs %s=", f.Kind, k)
			}
		}
		return nil
	}
	allow := func(keys ...string) error {
		for k := range seen {
			if k != "target" && k != "p" && !containsStr(keys, k) {
				return bad("%s takes no %s= (its keys: target, p, %s)", f.Kind, k, strings.Join(keys, ", "))
			}
		}
		return nil
	}
	var err error
	switch f.Kind {
	case KindDrop, KindSwap:
		err = allow("event", "at")
	case KindDuplicate:
		err = allow("event", "at", "id")
	case KindInject:
		err = allow("event", "at", "from")
		if f.From == "" {
			f.From = "session"
		}
	case KindHoldProgress, KindDropResponse:
		err = allow()
	case KindCut:
		if err = allow("after", "mid", "before_id", "close"); err == nil {
			n := 0
			for _, k := range []string{"after", "mid", "before_id"} {
				if seen[k] {
					n++
				}
			}
			if n != 1 {
				err = bad("cut needs exactly one of after=N, mid=N, before_id (got %d)", n)
			}
		}
	case KindStall:
		if err = allow("after", "for"); err == nil {
			err = need("for")
		}
	case KindDelay:
		if err = allow("delay"); err == nil {
			err = need("delay")
		}
	case KindKeepOpen:
		err = allow("for")
	case KindRetry:
		if err = allow("retry"); err == nil {
			err = need("retry")
		}
	case KindReplay:
		if err = allow("mode", "n", "back", "for"); err == nil {
			err = need("mode")
		}
		if err == nil && f.Target != TargetResume {
			err = bad("target=%s: replay acts on resumes only (target=resume)", f.Target)
		}
	case KindStatus:
		if err = allow("code", "retry_after"); err == nil {
			err = need("code")
		}
		if err == nil && f.RetryAfter >= 0 && f.Code == 404 {
			err = bad("retry_after=%d: only 429 and 503 carry Retry-After", f.RetryAfter)
		}
	case KindStorm:
		if err = allow("at", "every", "close"); err == nil {
			err = need("at")
		}
		if err == nil && f.Target != TargetGET {
			err = bad("target=%s: a storm closes GET streams (target=get)", f.Target)
		}
	}
	if f.N == 0 {
		f.N = 1
	}
	return err
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func kindList() string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// isEvent reports whether the fault acts on single events.
func (f *Fault) isEvent() bool {
	return f.Kind == KindDrop || f.Kind == KindDuplicate || f.Kind == KindSwap || f.Kind == KindInject
}
