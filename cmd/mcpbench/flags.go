package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/pflag"
)

// How the flags of run, sweep and soak override a profile.

// applyFlags overrides profile fields with the flags that were given.
// Errors name the flag.
func applyFlags(p *workload.Profile, f *runFlags, fl *pflag.FlagSet) error {
	set := func(name string) bool { return fl.Changed(name) }
	if err := applyLoad(p, f, set); err != nil {
		return err
	}
	applyTransport(p, f, set)
	applyNet(p, &f.net, f.insecure, set)
	if err := applyOps(p, f, set); err != nil {
		return err
	}
	if err := applyChaos(p, f, set); err != nil {
		return err
	}
	p.Thresholds = append(p.Thresholds, f.thresholds...)
	p.ThresholdFlags = len(f.thresholds) // their problems are the flag's, not the profile's
	for _, h := range f.headers {
		name, value, err := driver.ParseHeader(h)
		if err != nil {
			return err
		}
		if p.Headers == nil {
			p.Headers = map[string]string{}
		}
		p.Headers[name] = value
	}
	return nil
}

// applyLoad applies the load-model flags: target, protocol, VUs, rate,
// stages and the run's times.
func applyLoad(p *workload.Profile, f *runFlags, set func(string) bool) error {
	if set("url") && len(f.urls) > 0 {
		p.URL, p.URLs = f.urls[0], f.urls[1:]
	}
	override(set("source-addr"), &p.SourceAddrs, f.sourceAddrs)
	override(set("protocol"), &p.Protocol, f.protocol)
	if set("vus") {
		p.VUs = f.vus
		if !set("max-vus") && p.MaxVUs != 0 && p.MaxVUs < f.vus {
			p.MaxVUs = f.vus
		}
	}
	override(set("max-vus"), &p.MaxVUs, f.maxVUs)
	override(set("concurrency"), &p.Concurrency, f.concurrency)
	override(set("rate"), &p.Rate, f.rate)
	override(set("max-delay"), &p.MaxDelay, workload.Duration(f.maxDelay))
	if set("stage") {
		p.Stages = nil
		for _, st := range f.stages {
			sp, err := workload.ParseStage(st)
			if err != nil {
				return fmt.Errorf("--stage: %v", err)
			}
			p.Stages = append(p.Stages, sp)
		}
		p.Duration = 0 // the stages set the window
	}
	if set("duration") {
		if len(p.Stages) > 0 {
			src := "profile " + p.Name + "'s stages"
			if set("stage") {
				src = "the --stage stages"
			}
			return fmt.Errorf("--duration: %s set the measured window (%v in all): leave --duration out, or change the stages with --stage", src, p.Window())
		}
		p.Duration = workload.Duration(f.duration)
	}
	override(set("warmup"), &p.Warmup, workload.Duration(f.warmup))
	override(set("graceful-stop"), &p.GracefulStop, workload.Duration(f.graceful))
	override(set("think-time"), &p.ThinkTime, workload.Duration(f.think))
	override(set("get-stream"), &p.GETStream, f.getStream)
	override(set("churn-rate"), &p.Churn.Rate, f.churnRate)
	override(set("check-deleted"), &p.CheckDeleted, f.checkDeleted)
	override(set("seed"), &p.Seed, f.seed)
	return nil
}

// applyTransport applies timeouts, the resume policy, size limits,
// redirects and the embedded server's settings.
func applyTransport(p *workload.Profile, f *runFlags, set func(string) bool) {
	override(set("timeout"), &p.Timeouts.Request, workload.Duration(f.timeout))
	override(set("connect-timeout"), &p.Timeouts.Connect, workload.Duration(f.connectTimeout))
	override(set("stream-idle-timeout"), &p.Timeouts.StreamIdle, workload.Duration(f.idleTimeout))
	override(set("reconnect"), &p.Resume.Policy, f.reconnect)
	override(set("retry-default"), &p.Resume.DefaultRetry, workload.Duration(f.retryDefault))
	override(set("max-resumes"), &p.Resume.MaxAttempts, f.maxResumes)
	override(set("reissue"), &p.Resume.Reissue, f.reissue)
	override(set("max-message-bytes"), &p.MaxMessageBytes, f.maxMessage)
	override(set("max-event-bytes"), &p.MaxEventBytes, f.maxEvent)
	override(set("max-buffered-bytes"), &p.MaxBufferedBytes, f.maxBuffered)
	override(set("follow-redirects"), &p.FollowRedirects, f.followRedirects)
	override(set("server-mode"), &p.Server.Mode, f.serverMode)
	override(set("server-get-retry"), &p.Server.GETRetry, workload.Duration(f.getRetry))
	override(set("server-tick"), &p.Server.Tick, workload.Duration(f.tick))
	override(set("server-page-size"), &p.Server.PageSize, f.pageSize)
}

// applyOps replaces the op mix with one tools/call when --tool is given.
func applyOps(p *workload.Profile, f *runFlags, set func(string) bool) error {
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
	op := workload.OpSpec{Method: "tools/call", Tool: f.tool, Arguments: args, Progress: f.toolProgress, Weight: &one}
	if set("cancel") {
		c, err := workload.ParseCancel(f.cancel)
		if err != nil {
			return fmt.Errorf("--cancel: %v", err)
		}
		op.Cancel = &c
	}
	p.Ops = []workload.OpSpec{op}
	p.Name = "tool " + f.tool
	return nil
}

// applyChaos adds the --chaos faults and the --storm to the profile's plan.
func applyChaos(p *workload.Profile, f *runFlags, set func(string) bool) error {
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
	override(set("chaos-seed"), &p.Chaos.Seed, f.chaosSeed)
	return nil
}

// override sets *dst to v when the flag was given (set), leaving the
// profile's value otherwise.
func override[T any](set bool, dst *T, v T) {
	if set {
		*dst = v
	}
}
