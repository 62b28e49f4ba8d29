package setting

// The settings launch's errors and warnings name (and verdict's, soak's
// and sweep's advice names): the fields of
// launch.Spec, LiveSpec, K8sSpec, ProxySpec and Compare, the parameters
// of its functions (launch.Plot's formats, launch.MergeInto's out), and
// the profile's fields they check.
const (
	// launch.Spec
	Out             Name = "launch.Spec.Out"
	NoResults       Name = "launch.Spec.NoResults"
	Overwrite       Name = "launch.Spec.Overwrite"
	Processes       Name = "launch.Spec.Processes"
	StartDelay      Name = "launch.Spec.StartDelay"
	Segment         Name = "launch.Spec.Segment"
	SegmentSequence Name = "launch.Spec.SegmentSequence"
	StartAt         Name = "launch.Spec.StartAt"
	Procs           Name = "launch.Spec.Procs"
	TargetPID       Name = "launch.Spec.TargetPID"
	CPUProfile      Name = "launch.Spec.CPUProfile"

	// launch.LiveSpec
	Prometheus       Name = "launch.LiveSpec.Prometheus"
	PrometheusLinger Name = "launch.LiveSpec.PrometheusLinger"
	JSONL            Name = "launch.LiveSpec.JSONL"
	RemoteWrite      Name = "launch.LiveSpec.RemoteWrite"
	JUnit            Name = "launch.LiveSpec.JUnit"
	DashboardLinger  Name = "launch.LiveSpec.DashboardLinger"

	// launch.K8sSpec
	K8sParallelism Name = "launch.K8sSpec.Parallelism"
	K8sImage       Name = "launch.K8sSpec.Image"
	K8sName        Name = "launch.K8sSpec.Name"
	K8sClaim       Name = "launch.K8sSpec.Claim"
	K8sClaimSize   Name = "launch.K8sSpec.ClaimSize"
	K8sPullPolicy  Name = "launch.K8sSpec.PullPolicy"
	K8sSecrets     Name = "launch.K8sSpec.Secrets"
	K8sCPU         Name = "launch.K8sSpec.CPU"
	K8sMemory      Name = "launch.K8sSpec.Memory"

	// launch.ProxySpec, launch.Compare, the commands' functions
	ProxyListen   Name = "launch.ProxySpec.Listen"
	ProxyLog      Name = "launch.ProxySpec.LogPath"
	ProxyUpstream Name = "launch.ProxySpec.Config.Upstream"
	CompareForce  Name = "launch.Compare.Force"
	PlotFormats   Name = "launch.Plot's formats"
	MergeOut      Name = "launch.MergeInto's out"

	// profile.Profile and profile.SweepSpec, as launch checks them and
	// verdict's warnings, soak's and sweep's verdicts advise them
	URL         Name = "profile.Profile.URL"
	Rate        Name = "profile.Profile.Rate"
	MaxVUs      Name = "profile.Profile.MaxVUs"
	Warmup      Name = "profile.Profile.Warmup"
	VUs         Name = "profile.Profile.VUs"
	Iterations  Name = "profile.Profile.Iterations"
	AbortOnFail Name = "profile.Profile.AbortOnFail"
	Env         Name = "profile.Profile.Env"
	Thresholds  Name = "profile.Profile.Thresholds"
	SweepFrom   Name = "profile.SweepSpec.From"
	SweepTo     Name = "profile.SweepSpec.To"
	SweepSteps  Name = "profile.SweepSpec.Steps"
	SweepStep   Name = "profile.SweepSpec.Step"
	SweepRepeat Name = "profile.SweepSpec.Repeat"
)
