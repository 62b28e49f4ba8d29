package setting

// The settings live's errors and warnings name: its functions'
// parameters and RemoteWriteConfig's fields.
const (
	LiveServeAddr     Name = "live.Serve's addr"
	LiveDashboardAddr Name = "live.ServeDashboard's addr"
	LiveRemoteWrite   Name = "live.RemoteWriteConfig.URL"
)
