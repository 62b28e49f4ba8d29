package chaos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/units"
)

// Duration reads "1.5s" or "200ms" from YAML.
type Duration = units.Duration

// Action is what a fault does.
type Action string

// Actions.
const (
	ActionCut   Action = "cut"   // end the response stream
	ActionStall Action = "stall" // stop reading it for a while
	ActionDelay Action = "delay" // hold the request back before sending it
)

// Target selects the streams a fault applies to.
type Target string

// Targets: response streams of POSTs (requests answered with SSE), GET
// streams (standalone streams, resumes, and 2026-07-28's
// subscriptions/listen streams), or both — all of them requests of
// measured operations and the streams they read; or the session set-up
// (initialize), which faults leave alone unless they name it.
const (
	TargetPOST Target = "post"
	TargetGET  Target = "get"
	TargetBoth Target = "both"
	TargetInit Target = "init"
)

// Close is how a cut ends the connection.
type Close string

// Closes: FIN ends the stream in order (the reader sees the end of the
// stream, as when a server closes on purpose); RST resets the connection
// (the reader sees an error).
const (
	CloseFIN Close = "fin"
	CloseRST Close = "rst"
)

// Layer is what a cut breaks on a connection that carries several streams
// (HTTP/2). Over HTTP/1.1 a connection carries one stream at a time: every
// cut closes it, whatever the layer.
type Layer string

// Layers.
const (
	// LayerStream resets the one stream (HTTP/2: RST_STREAM); the
	// connection and its other streams (the session's GET stream) live on.
	LayerStream Layer = "stream"
	// LayerConn closes the connection under the stream (TCP FIN, or RST
	// with close=rst): every stream on it breaks.
	LayerConn Layer = "conn"
)

// When is the trigger of a cut or a stall: exactly one field is set.
type When struct {
	// AfterEvents fires after that many complete SSE events (a priming
	// event counts).
	AfterEvents int `yaml:"after_events" json:"after_events,omitempty"`
	// AfterBytes fires after that many body bytes.
	AfterBytes int64 `yaml:"after_bytes" json:"after_bytes,omitempty"`
	// MidEvent fires inside event MidEvent+1: after its first line, before
	// the blank line that would dispatch it (MidEvent complete events
	// first; 0 is the first event).
	MidEvent *int `yaml:"mid_event" json:"mid_event,omitempty"`
	// BeforeFirstEvent fires right after the response headers.
	BeforeFirstEvent bool `yaml:"before_first_event" json:"before_first_event,omitempty"`
	// Between fires at a random time in [Between[0], Between[1]] after the
	// response headers.
	Between []Duration `yaml:"between" json:"between,omitempty"`
}

// Fault is one entry of a plan.
type Fault struct {
	Action Action `yaml:"action" json:"action"`
	// When triggers a cut or a stall.
	When When `yaml:"when" json:"when"`
	// Close ends a cut: fin or rst (default rst).
	Close Close `yaml:"close" json:"close,omitempty"`
	// Layer a cut acts on: stream (default) or conn.
	Layer Layer `yaml:"layer" json:"layer,omitempty"`
	// Stall is how long a stall stops reading.
	Stall Duration `yaml:"stall" json:"stall,omitempty"`
	// Delay is how long a delay holds a request back.
	Delay Duration `yaml:"delay" json:"delay,omitempty"`
	// Target: post (default for cut and stall), get or both (default for
	// delay).
	Target Target `yaml:"target" json:"target,omitempty"`
	// Probability that a stream (or request, for delay) meets the fault,
	// in (0, 1]; 0 means 1.
	Probability float64 `yaml:"probability" json:"probability,omitempty"`
}

// Storm cuts every open stream of the target kind at a time.
type Storm struct {
	// At is the time since the start of the run (warm-up included).
	At Duration `yaml:"at" json:"at"`
	// Every repeats the storm with this period; 0 means once.
	Every Duration `yaml:"every" json:"every,omitempty"`
	// Close: fin or rst (default rst).
	Close Close `yaml:"close" json:"close,omitempty"`
	// Layer: stream (default) or conn.
	Layer Layer `yaml:"layer" json:"layer,omitempty"`
	// Target: post, get or both (default both).
	Target Target `yaml:"target" json:"target,omitempty"`
}

// Plan is a seeded fault plan. The zero value injects nothing.
type Plan struct {
	// Seed of the fault schedule; 0 means the run's seed.
	Seed   int64   `yaml:"seed" json:"seed,omitempty"`
	Faults []Fault `yaml:"faults" json:"faults,omitempty"`
	Storm  *Storm  `yaml:"storm" json:"storm,omitempty"`
}

// Empty reports whether the plan injects nothing.
func (p *Plan) Empty() bool { return p == nil || (len(p.Faults) == 0 && p.Storm == nil) }

// Defaults fills the documented defaults.
func (p *Plan) Defaults() {
	for i := range p.Faults {
		f := &p.Faults[i]
		if f.Close == "" {
			f.Close = CloseRST
		}
		if f.Probability == 0 {
			f.Probability = 1
		}
		if f.Layer == "" && f.Action == ActionCut {
			f.Layer = LayerStream
		}
		if f.Target == "" {
			f.Target = TargetPOST
			if f.Action == ActionDelay {
				f.Target = TargetBoth
			}
		}
	}
	if s := p.Storm; s != nil {
		if s.Close == "" {
			s.Close = CloseRST
		}
		if s.Target == "" {
			s.Target = TargetBoth
		}
		if s.Layer == "" {
			s.Layer = LayerStream
		}
	}
}

// Validate reports every problem of the plan (after Defaults), each with
// its field under prefix (e.g. "chaos").
func (p *Plan) Validate(prefix string) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(prefix+"."+format, args...)) }
	for i, f := range p.Faults {
		at := fmt.Sprintf("faults[%d]", i)
		switch f.Action {
		case ActionCut, ActionStall:
			if n := f.When.count(); n != 1 {
				add("%s.when: set exactly one of after_events, after_bytes, mid_event, before_first_event, between (got %d)", at, n)
			}
			if f.When.AfterEvents < 0 || f.When.AfterBytes < 0 || (f.When.MidEvent != nil && *f.When.MidEvent < 0) {
				add("%s.when: counts must be ≥ 0", at)
			}
			if b := f.When.Between; len(b) != 0 && (len(b) != 2 || b[0] < 0 || b[1] < b[0]) {
				add("%s.when.between: want [min, max] with 0 ≤ min ≤ max", at)
			}
			if f.Action == ActionStall && f.Stall <= 0 {
				add("%s.stall: want a duration > 0", at)
			}
			if f.Action == ActionCut && f.Close != CloseFIN && f.Close != CloseRST {
				add("%s.close: %q, want fin or rst", at, f.Close)
			}
			if f.Action == ActionCut && f.Layer != LayerStream && f.Layer != LayerConn {
				add("%s.layer: %q, want stream or conn", at, f.Layer)
			}
		case ActionDelay:
			if f.Delay <= 0 {
				add("%s.delay: want a duration > 0", at)
			}
			if f.When.count() != 0 {
				add("%s.when: a delay has no trigger", at)
			}
		default:
			add("%s.action: %q, want cut, stall or delay", at, f.Action)
		}
		if !validTarget(f.Target) {
			add("%s.target: %q, want post, get, both or init", at, f.Target)
		}
		if f.Probability < 0 || f.Probability > 1 {
			add("%s.probability: %g, want in (0, 1]", at, f.Probability)
		}
	}
	if s := p.Storm; s != nil {
		if s.At < 0 || s.Every < 0 {
			add("storm: at and every must be ≥ 0")
		}
		if s.Close != CloseFIN && s.Close != CloseRST {
			add("storm.close: %q, want fin or rst", s.Close)
		}
		if s.Layer != LayerStream && s.Layer != LayerConn {
			add("storm.layer: %q, want stream or conn", s.Layer)
		}
		if !validTarget(s.Target) || s.Target == TargetInit {
			add("storm.target: %q, want post, get or both", s.Target)
		}
	}
	return errs
}

func validTarget(t Target) bool {
	return t == TargetPOST || t == TargetGET || t == TargetBoth || t == TargetInit
}

func (w When) count() int {
	n := 0
	if w.AfterEvents > 0 {
		n++
	}
	if w.AfterBytes > 0 {
		n++
	}
	if w.MidEvent != nil {
		n++
	}
	if w.BeforeFirstEvent {
		n++
	}
	if len(w.Between) > 0 {
		n++
	}
	return n
}

func (t Target) matches(k kind) bool {
	switch t {
	case TargetBoth:
		return k == kindPOST || k == kindGET
	case TargetGET:
		return k == kindGET
	case TargetInit:
		return k == kindInit
	}
	return k == kindPOST
}

// ParseFault parses the --chaos flag syntax: an action followed by
// key=value pairs, e.g.
//
//	cut after_events=2 close=rst target=post p=1
//	cut after_events=2 layer=conn (HTTP/2: the connection, not the stream)
//	cut between=100ms-500ms close=fin
//	cut mid_event=1
//	cut before_first_event
//	stall after_events=3 stall=2s target=get p=0.1
//	delay delay=50ms p=0.05
func ParseFault(spec string) (Fault, error) {
	words := strings.Fields(spec)
	if len(words) == 0 {
		return Fault{}, errors.New("chaos: empty fault")
	}
	f := Fault{Action: Action(words[0])}
	for _, w := range words[1:] {
		k, v, _ := strings.Cut(w, "=")
		var err error
		switch k {
		case "after_events":
			f.When.AfterEvents, err = strconv.Atoi(v)
		case "after_bytes":
			f.When.AfterBytes, err = strconv.ParseInt(v, 10, 64)
		case "mid_event":
			n := 0
			if v != "" {
				n, err = strconv.Atoi(v)
			}
			f.When.MidEvent = &n
		case "before_first_event":
			f.When.BeforeFirstEvent = true
		case "between":
			lo, hi, ok := strings.Cut(v, "-")
			if !ok {
				return f, fmt.Errorf("chaos %q: between=MIN-MAX, e.g. 100ms-500ms", spec)
			}
			a, e1 := units.ParseDuration(lo)
			b, e2 := units.ParseDuration(hi)
			if err = errors.Join(e1, e2); err == nil {
				f.When.Between = []Duration{Duration(a), Duration(b)}
			}
		case "close":
			f.Close = Close(v)
		case "layer":
			f.Layer = Layer(v)
		case "target":
			f.Target = Target(v)
		case "p", "probability":
			f.Probability, err = strconv.ParseFloat(v, 64)
		case "stall", "delay":
			var d time.Duration
			d, err = units.ParseDuration(v)
			if k == "stall" {
				f.Stall = Duration(d)
			} else {
				f.Delay = Duration(d)
			}
		default:
			return f, fmt.Errorf("chaos %q: unknown key %q", spec, k)
		}
		if err != nil {
			return f, fmt.Errorf("chaos %q: %s: %v", spec, k, err)
		}
	}
	return f, nil
}

// ParseStorm parses the --storm flag syntax: key=value pairs, e.g.
// "at=10s every=30s close=rst target=get layer=conn".
func ParseStorm(spec string) (*Storm, error) {
	s := &Storm{}
	for _, w := range strings.Fields(spec) {
		k, v, _ := strings.Cut(w, "=")
		var err error
		var d time.Duration
		switch k {
		case "at", "every":
			d, err = units.ParseDuration(v)
			if k == "at" {
				s.At = Duration(d)
			} else {
				s.Every = Duration(d)
			}
		case "close":
			s.Close = Close(v)
		case "layer":
			s.Layer = Layer(v)
		case "target":
			s.Target = Target(v)
		default:
			return nil, fmt.Errorf("storm %q: unknown key %q", spec, k)
		}
		if err != nil {
			return nil, fmt.Errorf("storm %q: %s: %v", spec, k, err)
		}
	}
	return s, nil
}
