package live

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/golang/snappy"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/results"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"
)

// Environment variables RemoteWriteAuthFromEnv reads: a bearer token, or
// a user and password for basic auth. Their values are never printed.
const (
	EnvRemoteWriteToken    = "MCPBENCH_PROMETHEUS_RW_TOKEN"
	EnvRemoteWriteUser     = "MCPBENCH_PROMETHEUS_RW_USER"
	EnvRemoteWritePassword = "MCPBENCH_PROMETHEUS_RW_PASSWORD"
)

// RemoteWriteConfig configures a RemoteWrite sink. Zero fields take the
// defaults named on each.
type RemoteWriteConfig struct {
	// URL is the receiver's endpoint, http or https, without credentials
	// (e.g. http://127.0.0.1:9090/api/v1/write).
	URL string
	// Labels are added to every series (job, instance, …); a metric's
	// own label of the same name wins.
	Labels map[string]string
	// Token is sent as "Authorization: Bearer Token"; else User and
	// Password, when User is set, as basic auth.
	Token, User, Password string
	// Queue is how many snapshots wait for the sender (default 64, a
	// minute of 1 s intervals); a snapshot that finds it full pushes out
	// the oldest, counted in Dropped. Counters are cumulative, so a
	// dropped snapshot costs resolution, not totals.
	Queue int
	// Timeout bounds one POST (default 10 s).
	Timeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a retry, doubled
	// from MinBackoff at each (defaults 100 ms and 5 s); MaxRetries is
	// how many retries a snapshot gets before it counts as failed
	// (default 5; negative: none).
	MinBackoff, MaxBackoff time.Duration
	MaxRetries             int
	// Client sends the requests (nil: a client of its own).
	Client *http.Client
	// Source, when set, is a Prometheus sink that the same run feeds
	// ahead of this one (--prometheus's): the snapshots are taken from it
	// and RemoteWrite keeps no counters of its own, so the interval
	// histograms are not accumulated twice. Nil: a sink of its own.
	Source *Prometheus
}

// RemoteWriteAuthFromEnv fills cfg's credentials from the environment
// (EnvRemoteWriteToken, or EnvRemoteWriteUser and EnvRemoteWritePassword)
// through lookup (os.LookupEnv). The error names the variables, never
// their values.
func RemoteWriteAuthFromEnv(cfg *RemoteWriteConfig, lookup secret.LookupFunc) error {
	tok, hasTok := lookup(EnvRemoteWriteToken)
	user, hasUser := lookup(EnvRemoteWriteUser)
	pass, _ := lookup(EnvRemoteWritePassword)
	if hasTok && tok != "" && hasUser && user != "" {
		return fmt.Errorf("%s: both %s and %s are set: set one (a bearer token, or basic auth)", setting.LiveRemoteWrite, EnvRemoteWriteToken, EnvRemoteWriteUser)
	}
	cfg.Token, cfg.User, cfg.Password = tok, user, pass
	return nil
}

// RemoteWriteStats are a RemoteWrite sink's counts.
type RemoteWriteStats struct {
	Sent    int64  // snapshots the receiver accepted (2xx)
	Dropped int64  // snapshots pushed out of the full queue
	Failed  int64  // snapshots given up on: a 4xx other than 429, or retries spent
	Unsent  int64  // snapshots still queued or in flight when Close's deadline came
	Retries int64  // retried POSTs
	LastErr string // the last failure (no credentials), "" none
}

// RemoteWrite is a results.Sink that pushes a run's metrics to a
// Prometheus remote-write receiver (protocol 1.0, as k6's output: a
// snappy-compressed protobuf WriteRequest POSTed with Content-Encoding:
// snappy). The series are those the Prometheus endpoint serves (same
// names and labels: counters as cumulative totals, histograms as classic
// _bucket{le}, _sum and _count), with the config's labels added, one
// snapshot at the run's start, after every interval and at its end.
//
// The engine's calls only update the counters and queue a snapshot
// (never blocking: see RemoteWriteConfig.Queue); a goroutine of its own
// encodes and sends them, retrying network errors, 5xx and 429 with
// exponential backoff. Close flushes within a deadline. Safe for
// concurrent use.
type RemoteWrite struct {
	cfg    RemoteWriteConfig
	prom   *Prometheus
	own    bool // prom is fed by this sink (not RemoteWriteConfig.Source)
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{}
	done   chan struct{}

	mu     sync.Mutex // guards the fields below
	queue  []*snapshot
	closed bool
	lastTS int64
	stats  RemoteWriteStats
}

var _ results.Sink = (*RemoteWrite)(nil)

// snapshot is every series' value at one time (ms since the epoch).
type snapshot struct {
	ts     int64
	series []rwSeries
}

// rwSeries is one series: its labels sorted by name (__name__ among
// them) and its value.
type rwSeries struct {
	labels []rwLabel
	value  float64
}

type rwLabel struct{ name, value string }

// CheckRemoteWriteURL refuses a --prometheus-rw URL with user:password@
// (secret.RefuseUserinfo, wrapping secret.ErrURLCredentials): the
// credentials go in the environment (EnvRemoteWriteToken, or
// EnvRemoteWriteUser and EnvRemoteWritePassword). NewRemoteWrite refuses
// such a URL with this error; the commands check it with their flags,
// before anything runs or a manifest is printed.
func CheckRemoteWriteURL(raw string) error {
	return secret.RefuseUserinfo(setting.LiveRemoteWrite.String(), raw,
		"set "+EnvRemoteWriteToken+", or "+EnvRemoteWriteUser+" and "+EnvRemoteWritePassword+", instead")
}

// NewRemoteWrite checks cfg and starts the sender. The error names the
// flag and says what is wrong with the URL.
func NewRemoteWrite(cfg RemoteWriteConfig) (*RemoteWrite, error) {
	u, err := url.Parse(cfg.URL)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s %q: want an http:// or https:// URL (e.g. http://127.0.0.1:9090/api/v1/write)", setting.LiveRemoteWrite, secret.RedactURL(cfg.URL))
	case u.Host == "":
		return nil, fmt.Errorf("%s %q: the URL has no host", setting.LiveRemoteWrite, secret.RedactURL(cfg.URL))
	case u.User != nil:
		return nil, CheckRemoteWriteURL(cfg.URL)
	}
	cfg.Queue = cmp.Or(cfg.Queue, 64)
	cfg.Timeout = cmp.Or(cfg.Timeout, 10*time.Second)
	cfg.MinBackoff = cmp.Or(cfg.MinBackoff, 100*time.Millisecond)
	cfg.MaxBackoff = max(cmp.Or(cfg.MaxBackoff, 5*time.Second), cfg.MinBackoff)
	cfg.MaxRetries = cmp.Or(cfg.MaxRetries, 5)
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: cfg.Timeout}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &RemoteWrite{cfg: cfg, prom: cfg.Source, client: client, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if r.prom == nil {
		r.prom, r.own = NewPrometheus(), true
	}
	go r.run()
	return r, nil
}

// URL returns the receiver's URL, for display.
func (r *RemoteWrite) URL() string { return secret.RedactURL(r.cfg.URL) }

// Start implements results.Sink: every op's series at zero, pushed,
// stamped with the run's start.
func (r *RemoteWrite) Start(info *results.RunInfo) {
	if r.own {
		r.prom.Start(info)
	}
	// Stamped with the run's start: a run replayed after the fact (the
	// merged run of --processes) keeps its times.
	t := time.Now()
	if !info.Started.IsZero() && info.Started.Before(t) {
		t = info.Started
	}
	r.push(t)
}

// Interval implements results.Sink: the interval added, a snapshot
// queued.
func (r *RemoteWrite) Interval(rec *results.IntervalRecord) {
	if r.own {
		r.prom.Interval(rec)
	}
	// Stamped with the interval's end, which its counts run to (the
	// close comes a little later, later still on a busy machine).
	r.push(cmp.Or(rec.Row.End, time.Now()))
}

// End implements results.Sink: the final counts queued.
func (r *RemoteWrite) End(end *results.RunEnd) {
	if r.own {
		r.prom.End(end)
	}
	r.push(time.Now())
}

// push takes a snapshot stamped t and queues it, pushing out the oldest
// when the queue is full.
func (r *RemoteWrite) push(t time.Time) {
	s := r.snapshot()
	s.ts = t.UnixMilli()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	// Samples of a series must go forward in time: one ms apart at least.
	s.ts = max(s.ts, r.lastTS+1)
	r.lastTS = s.ts
	if len(r.queue) >= r.cfg.Queue {
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.stats.Dropped++
	}
	r.queue = append(r.queue, s)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// snapshot collects the Prometheus sink's metrics as series (ts unset).
func (r *RemoteWrite) snapshot() *snapshot {
	ch := make(chan prometheus.Metric, 64)
	go func() {
		r.prom.Collect(ch)
		close(ch)
	}()
	s := &snapshot{}
	var m dto.Metric
	for metric := range ch {
		m.Reset()
		if metric.Write(&m) != nil {
			continue
		}
		name, ok := descNames[metric.Desc()]
		if !ok {
			continue
		}
		labels := make([]rwLabel, 0, len(m.Label)+len(r.cfg.Labels)+2)
		for _, l := range m.Label {
			labels = append(labels, rwLabel{l.GetName(), l.GetValue()})
		}
		add := func(name string, v float64, extra ...rwLabel) {
			ls := append(append(slices.Clip(labels), extra...), rwLabel{"__name__", name})
			for k, v := range r.cfg.Labels {
				if !slices.ContainsFunc(ls, func(l rwLabel) bool { return l.name == k }) {
					ls = append(ls, rwLabel{k, v})
				}
			}
			slices.SortFunc(ls, func(a, b rwLabel) int { return cmp.Compare(a.name, b.name) })
			s.series = append(s.series, rwSeries{labels: ls, value: v})
		}
		switch {
		case m.Counter != nil:
			add(name, m.Counter.GetValue())
		case m.Gauge != nil:
			add(name, m.Gauge.GetValue())
		case m.Histogram != nil:
			h := m.Histogram
			for _, b := range h.Bucket {
				if math.IsInf(b.GetUpperBound(), +1) {
					continue
				}
				add(name+"_bucket", float64(b.GetCumulativeCount()), rwLabel{"le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)})
			}
			add(name+"_bucket", float64(h.GetSampleCount()), rwLabel{"le", "+Inf"})
			add(name+"_sum", h.GetSampleSum())
			add(name+"_count", float64(h.GetSampleCount()))
		}
	}
	return s
}

// run is the sender: it posts the queued snapshots in order until Close.
func (r *RemoteWrite) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		for len(r.queue) == 0 {
			if r.closed {
				r.mu.Unlock()
				return
			}
			r.mu.Unlock()
			select {
			case <-r.wake:
			case <-r.ctx.Done():
				return
			}
			r.mu.Lock()
		}
		s := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.mu.Unlock()
		r.send(s)
		if r.ctx.Err() != nil {
			return
		}
	}
}

// send posts one snapshot, retrying what may pass later.
func (r *RemoteWrite) send(s *snapshot) {
	body := snappy.Encode(nil, encodeWriteRequest(nil, s))
	wait := r.cfg.MinBackoff
	for attempt := 0; ; attempt++ {
		retry, err := r.post(body)
		if err == nil {
			r.count(func(st *RemoteWriteStats) { st.Sent++ })
			return
		}
		if !retry || attempt >= r.cfg.MaxRetries || r.ctx.Err() != nil {
			r.count(func(st *RemoteWriteStats) {
				if r.ctx.Err() != nil {
					st.Unsent++ // Close's deadline cut it short
				} else {
					st.Failed++
				}
				st.LastErr = err.Error()
			})
			return
		}
		r.count(func(st *RemoteWriteStats) { st.Retries++ })
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			r.count(func(st *RemoteWriteStats) { st.Unsent++; st.LastErr = err.Error() })
			return
		}
		wait = min(2*wait, r.cfg.MaxBackoff)
	}
}

func (r *RemoteWrite) count(f func(*RemoteWriteStats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.stats)
}

// post sends one request; retry says whether a failure may pass later
// (network errors, 5xx, 429).
func (r *RemoteWrite) post(body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(r.ctx, http.MethodPost, r.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "mcpbench")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	switch {
	case r.cfg.Token != "":
		req.Header.Set("Authorization", "Bearer "+r.cfg.Token)
	case r.cfg.User != "":
		req.SetBasicAuth(r.cfg.User, r.cfg.Password)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, by the caller
		}
		return true, fmt.Errorf("POST: %w", err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, err
}

// Close stops taking snapshots and flushes the queue: it waits for the
// sender until the queue is sent or timeout has passed, then abandons
// what is left (counted in Unsent). It returns the counts. Idempotent.
func (r *RemoteWrite) Close(timeout time.Duration) RemoteWriteStats {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(timeout)
	select {
	case <-r.done:
	case <-t.C:
		r.cancel()
		<-r.done
	}
	t.Stop()
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Unsent += int64(len(r.queue))
	r.queue = nil
	return r.stats
}

// Stats returns the counts so far.
func (r *RemoteWrite) Stats() RemoteWriteStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// encodeWriteRequest appends the protobuf of a remote-write 1.0
// WriteRequest holding the snapshot (prometheus/prompb/remote.proto):
//
//	WriteRequest { repeated TimeSeries timeseries = 1; }
//	TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//	Label        { string name = 1; string value = 2; }
//	Sample       { double value = 1; int64 timestamp = 2; }
func encodeWriteRequest(b []byte, s *snapshot) []byte {
	var ts, lb []byte
	for _, se := range s.series {
		ts = ts[:0]
		for _, l := range se.labels {
			lb = lb[:0]
			lb = protowire.AppendTag(lb, 1, protowire.BytesType)
			lb = protowire.AppendString(lb, l.name)
			lb = protowire.AppendTag(lb, 2, protowire.BytesType)
			lb = protowire.AppendString(lb, l.value)
			ts = protowire.AppendTag(ts, 1, protowire.BytesType)
			ts = protowire.AppendBytes(ts, lb)
		}
		lb = lb[:0]
		lb = protowire.AppendTag(lb, 1, protowire.Fixed64Type)
		lb = protowire.AppendFixed64(lb, math.Float64bits(se.value))
		lb = protowire.AppendTag(lb, 2, protowire.VarintType)
		lb = protowire.AppendVarint(lb, uint64(s.ts))
		ts = protowire.AppendTag(ts, 2, protowire.BytesType)
		ts = protowire.AppendBytes(ts, lb)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, ts)
	}
	return b
}
