package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/spf13/pflag"
)

// How the flags of run, sweep and soak override a profile.

// applyFlags overrides profile fields with the flags that were given.
// Errors name the flag.
func applyFlags(p *profile.Profile, f *runFlags, fl *pflag.FlagSet) error {
	set := func(name string) bool { return fl.Changed(name) }
	if err := applyLoad(p, f, set); err != nil {
		return err
	}
	if err := p.Override(given(f.profileFlags(), set)...); err != nil {
		return err
	}
	if err := applyOps(p, f, set); err != nil {
		return err
	}
	if err := applyChaos(p, f, set); err != nil {
		return err
	}
	p.Thresholds = append(p.Thresholds, f.thresholds...)
	p.ThresholdFlags = len(f.thresholds) // their problems are the flag's, not the profile's
	p.Checks = append(p.Checks, f.checks...)
	p.CheckFlags = len(f.checks) // likewise
	if err := p.SetEnv(f.envs); err != nil {
		return err
	}
	if err := p.AbortAll(f.abortOnFail, f.abortDelay, set("abort-delay")); err != nil {
		return err
	}
	for _, h := range f.headers {
		name, value, err := launch.ParseHeader(h)
		if err != nil {
			return err
		}
		if p.Headers == nil {
			p.Headers = map[string]string{}
		}
		p.Headers[name] = value
	}
	return checkURLCredentials(p, f) // flags_secret.go
}

// profileFlag is a flag that sets one profile field: the flag's name,
// the field's YAML path and the flag's variable (profile.Override).
type profileFlag struct {
	flag, field string
	value       any
}

// profileFlags are the flags of run, sweep and soak that set one profile
// field each. The flags that do more are applyLoad's (--url, --stage,
// --duration), applyOps' (--tool), applyChaos' (--chaos, --storm),
// --threshold and --header.
func (f *runFlags) profileFlags() []profileFlag {
	return []profileFlag{
		{"source-addr", "source_addrs", &f.sourceAddrs},
		{"protocol", "protocol", &f.protocol},
		{"vus", "vus", &f.vus}, // raises a lower max_vus of the profile (Override)
		{"max-vus", "max_vus", &f.maxVUs},
		{"concurrency", "concurrency", &f.concurrency},
		{"rate", "rate", &f.rate},
		{"max-delay", "max_delay", &f.maxDelay},
		{"duration", "duration", &f.duration}, // refused with stages (applyLoad)
		{"warmup", "warmup", &f.warmup},
		{"graceful-stop", "graceful_stop", &f.graceful},
		{"think-time", "think_time", &f.think},
		{"iterations", "iterations", &f.iterations},
		{"get-stream", "get_stream", &f.getStream},
		{"churn-rate", "churn.rate", &f.churnRate},
		{"check-deleted", "check_deleted", &f.checkDeleted},
		{"seed", "seed", &f.seed},
		{"timeout", "timeouts.request", &f.timeout},
		{"connect-timeout", "timeouts.connect", &f.connectTimeout},
		{"stream-idle-timeout", "timeouts.stream_idle", &f.idleTimeout},
		{"reconnect", "resume.policy", &f.reconnect},
		{"retry-default", "resume.default_retry", &f.retryDefault},
		{"max-resumes", "resume.max_attempts", &f.maxResumes},
		{"reissue", "resume.reissue", &f.reissue},
		{"max-message-bytes", "max_message_bytes", &f.maxMessage},
		{"max-event-bytes", "max_event_bytes", &f.maxEvent},
		{"max-buffered-bytes", "max_buffered_bytes", &f.maxBuffered},
		{"follow-redirects", "follow_redirects", &f.followRedirects},
		{"server-mode", "server.mode", &f.serverMode},
		{"server-get-retry", "server.get_retry", &f.getRetry},
		{"server-tick", "server.tick", &f.tick},
		{"server-page-size", "server.page_size", &f.pageSize},
		{"http", "http", &f.net.http},
		{"proxy", "proxy", &f.net.proxy},
		{"ca", "tls.ca", &f.net.ca},
		{"cert", "tls.cert", &f.net.cert},
		{"key", "tls.key", &f.net.key},
		{"tls-server-name", "tls.server_name", &f.net.serverName},
		{"insecure", "tls.insecure", &f.insecure},
		{"oauth-client-id", "oauth.client_id", &f.net.oauthID},
		{"oauth-client-secret", "oauth.client_secret", &f.net.oauthSecret},
		{"oauth-scope", "oauth.scopes", &f.net.oauthScopes},
		{"oauth-issuer", "oauth.issuer", &f.net.oauthIssuer},
		{"chaos-seed", "chaos.seed", &f.chaosSeed},
	}
}

// given returns the overrides of the flags in table that were given
// (set), in the table's order.
func given(table []profileFlag, set func(string) bool) []profile.Override {
	var out []profile.Override
	for _, pf := range table {
		if set(pf.flag) {
			out = append(out, profile.Override{Field: pf.field, Value: pf.value})
		}
	}
	return out
}

// applyLoad applies the load-model flags that do more than set a field:
// the target (--url: url and urls) and the stages (--stage replaces
// them and leaves the window to them; --duration is refused with them).
func applyLoad(p *profile.Profile, f *runFlags, set func(string) bool) error {
	if set("url") && len(f.urls) > 0 {
		p.URL, p.URLs = f.urls[0], f.urls[1:]
	}
	if set("stage") {
		p.Stages = nil
		for _, st := range f.stages {
			sp, err := profile.ParseStage(st)
			if err != nil {
				return fmt.Errorf("--stage: %v", err)
			}
			p.Stages = append(p.Stages, sp)
		}
		p.Duration = 0 // the stages set the window
	}
	if set("duration") && len(p.Stages) > 0 {
		src := "profile " + p.Name + "'s stages"
		if set("stage") {
			src = "the --stage stages"
		}
		return fmt.Errorf("--duration: %s set the measured window (%v in all): leave --duration out, or change the stages with --stage", src, p.Window())
	}
	return nil
}

// applyOps replaces the op mix with one tools/call when --tool is given.
func applyOps(p *profile.Profile, f *runFlags, set func(string) bool) error {
	if set("args") && !set("tool") {
		return errors.New("--args needs --tool")
	}
	if set("cancel") && !set("tool") {
		return errors.New("--cancel needs --tool (in a profile, give an op cancel: {after: 50ms, p: 0.1})")
	}
	if !set("tool") {
		return nil
	}
	var args map[string]any
	if f.toolArgs != "" {
		if err := json.Unmarshal([]byte(f.toolArgs), &args); err != nil {
			return fmt.Errorf("--args: not a JSON object: %v", err)
		}
	}
	one := 1
	op := profile.OpSpec{Method: "tools/call", Tool: f.tool, Arguments: args, Progress: f.toolProgress, Weight: &one}
	if set("cancel") {
		c, err := profile.ParseCancel(f.cancel)
		if err != nil {
			return fmt.Errorf("--cancel: %v", err)
		}
		op.Cancel = &c
	}
	p.Ops = []profile.OpSpec{op}
	p.Name = "tool " + f.tool
	return nil
}

// applyChaos adds the --chaos faults and the --storm to the profile's plan.
func applyChaos(p *profile.Profile, f *runFlags, set func(string) bool) error {
	if len(f.chaosSpecs) == 0 && !set("storm") && !set("chaos-seed") {
		return nil
	}
	if p.Chaos == nil {
		p.Chaos = &chaos.Plan{}
	}
	for _, spec := range f.chaosSpecs {
		ft, err := chaos.ParseFault(spec)
		if err != nil {
			return err
		}
		p.Chaos.Faults = append(p.Chaos.Faults, ft)
	}
	if set("storm") {
		st, err := chaos.ParseStorm(f.storm)
		if err != nil {
			return err
		}
		p.Chaos.Storm = st
	}
	return nil
}
