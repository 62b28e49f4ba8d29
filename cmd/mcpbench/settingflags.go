package main

import (
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/spf13/cobra"
)

// settingFlags says each library setting as the CLI sets it: its flag, or
// where the CLI takes it from. Keys are the names library errors use:
// internal/setting's (the package-qualified field, "driver.Config.
// RequestTimeout") and workload's YAML paths ("abort_on_fail"); one table
// for both, as their names never collide. Installed at init (below), so
// every error text the process makes or reads — stderr, summary.json's
// examples, the report, a child's stderr — says the flag, as it did
// before the libraries named their settings. One table for every library:
// a setting missing here is said by its library name.
var settingFlags = map[string]string{
	// driver.Config
	string(setting.RequestTimeout):    "--timeout",
	string(setting.StreamIdleTimeout): "--stream-idle-timeout",
	string(setting.MaxMessageBytes):   "--max-message-bytes",
	string(setting.MaxEventBytes):     "--max-event-bytes",
	string(setting.FollowRedirects):   "--follow-redirects",
	string(setting.Header):            "-H",

	// httpclient.Options, TLSFiles, OAuthConfig
	string(setting.HTTPVersion):       "--http",
	string(setting.Proxy):             "--proxy",
	string(setting.ConnectTimeout):    "--connect-timeout",
	string(setting.Insecure):          "--insecure",
	string(setting.CAFile):            "--ca",
	string(setting.CertFile):          "--cert",
	string(setting.KeyFile):           "--key",
	string(setting.TLSServerName):     "--tls-server-name",
	string(setting.OAuthClientID):     "--oauth-client-id",
	string(setting.OAuthClientSecret): "the secret in $MCPBENCH_OAUTH_CLIENT_SECRET",

	// launch.Spec, LiveSpec, K8sSpec, ProxySpec, Compare, the parameters of its functions
	// (and the profile's fields as launch checks them)
	string(setting.Out):              "--out",
	string(setting.NoResults):        "--no-results",
	string(setting.Overwrite):        "--overwrite",
	string(setting.Processes):        "--processes",
	string(setting.StartDelay):       "--start-delay",
	string(setting.Segment):          "--segment",
	string(setting.SegmentSequence):  "--segment-sequence",
	string(setting.StartAt):          "--start-at",
	string(setting.Procs):            "--procs",
	string(setting.TargetPID):        "--target-pid",
	string(setting.CPUProfile):       "--cpuprofile",
	string(setting.Prometheus):       "--prometheus",
	string(setting.PrometheusLinger): "--prometheus-linger",
	string(setting.JSONL):            "--out-jsonl",
	string(setting.RemoteWrite):      "--prometheus-rw",
	string(setting.JUnit):            "--junit",
	string(setting.DashboardLinger):  "--dashboard-linger",
	string(setting.K8sParallelism):   "--parallelism",
	string(setting.K8sImage):         "--image",
	string(setting.K8sName):          "--name",
	string(setting.K8sClaim):         "--claim",
	string(setting.K8sClaimSize):     "--claim-size",
	string(setting.K8sPullPolicy):    "--image-pull-policy",
	string(setting.K8sSecrets):       "--env-from-secret",
	string(setting.K8sCPU):           "--cpu",
	string(setting.K8sMemory):        "--memory",
	string(setting.ProxyListen):      "--listen",
	string(setting.ProxyLog):         "--log",
	string(setting.ProxyUpstream):    "--upstream",
	string(setting.CompareForce):     "--force",
	string(setting.PlotFormats):      "--format",
	string(setting.MergeOut):         "--out",
	string(setting.URL):              "--url",
	string(setting.Rate):             "--rate",
	string(setting.MaxVUs):           "--max-vus",
	string(setting.Warmup):           "--warmup",
	string(setting.VUs):              "--vus",
	string(setting.Iterations):       "--iterations",
	string(setting.AbortOnFail):      "--abort-on-fail",
	string(setting.Env):              "-e",
	string(setting.Thresholds):       "--threshold",
	string(setting.SweepFrom):        "--from",
	string(setting.SweepTo):          "--to",
	string(setting.SweepSteps):       "--steps",
	string(setting.SweepStep):        "--step",
	string(setting.SweepRepeat):      "--repeat",

	// live's and verdict's parameters
	string(setting.LiveServeAddr):     "--prometheus",
	string(setting.LiveDashboardAddr): "--dashboard",
	string(setting.LiveRemoteWrite):   "--prometheus-rw",
	string(setting.VerdictRegression): "--fail-if",
	string(setting.VerdictSweepLimit): "--fail-if",
	string(setting.VerdictJUnitPath):  "--junit",

	// profile.SettingError's YAML paths
	"abort_on_fail":       "--abort-on-fail",
	"abort_on_fail.delay": "--abort-delay",
	"checks":              "--check",
	"env":                 "-e",
	"get_stream":          "--get-stream",
	"oauth.client_id":     "--oauth-client-id",
	"protocol":            "--protocol",
	"segment":             "--segment",
	"segment_sequence":    "--segment-sequence",
	"thresholds":          "--threshold",
}

// The hook: errors reach the terminal (and the results) from many places
// (main's stderr, the report's examples recorded inside the libraries), so
// the words are installed once for the whole process, before any error is
// made.
func init() { setting.SetNames(func(n setting.Name) string { return settingFlags[string(n)] }) }

// flagOf is the flag of setting s (s itself when no flag gives it).
func flagOf(s string) string {
	if f, ok := settingFlags[s]; ok {
		return f
	}
	return s
}

// cliText is err's message with every setting a *profile.SettingError
// in it names written as its flag, as the command line gives it.
func cliText(err error) string { return profile.SaidWith(err, flagOf) }

// namedAsFlags makes the errors of c's commands (c's and its
// subcommands' RunE) name settings as their flags (cliText).
func namedAsFlags(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error { return asFlags(run(cmd, args)) }
	}
	for _, sub := range c.Commands() {
		namedAsFlags(sub)
	}
}

// asFlags is err with its settings named as flags (cliText);
// errors.Is and errors.As see through it.
func asFlags(err error) error { return profile.NamedWith(err, flagOf) }
