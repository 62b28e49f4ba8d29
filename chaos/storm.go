package chaos

import "time"

// register adds b to the open streams a storm wave cuts.
func (in *Injector) register(b *body) {
	in.mu.Lock()
	in.open[b] = struct{}{}
	in.mu.Unlock()
}

// unregister removes b from the open streams (on Close).
func (in *Injector) unregister(b *body) {
	in.mu.Lock()
	delete(in.open, b)
	in.mu.Unlock()
}

// Start starts the storm clock: the plan's storm fires At after t0 (and
// every Every after). Call it once, when the run starts.
func (in *Injector) Start(t0 time.Time) {
	s := in.plan.Storm
	if s == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	var fire func()
	next := t0.Add(s.At.D())
	fire = func() {
		in.mu.Lock()
		if in.stopped {
			in.mu.Unlock()
			return
		}
		in.waves = append(in.waves, time.Now())
		in.waveCuts = append(in.waveCuts, 0)
		wave := len(in.waves) - 1
		var victims []*body
		for b := range in.open {
			k := kindPOST
			if b.get {
				k = kindGET
			}
			if s.Target.matches(k) {
				victims = append(victims, b)
			}
		}
		if s.Every > 0 {
			next = next.Add(s.Every.D())
			in.storm = time.AfterFunc(time.Until(next), fire)
		}
		in.mu.Unlock()
		for _, b := range victims {
			if ok, streamOnly := b.cut(s.Close, s.Layer, true); ok {
				in.mu.Lock()
				in.waveCuts[wave]++
				in.mu.Unlock()
				in.count(countStorm, b.phase)
				in.countLayer(streamOnly, b.phase)
			}
		}
	}
	in.storm = time.AfterFunc(time.Until(next), fire)
}

// Stop stops the storm clock.
func (in *Injector) Stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.stopped = true
	if in.storm != nil {
		in.storm.Stop()
	}
}
