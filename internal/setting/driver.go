package setting

// The settings of driver.Config that its errors name.
const (
	RequestTimeout    Name = "driver.Config.RequestTimeout"
	StreamIdleTimeout Name = "driver.Config.StreamIdleTimeout"
	MaxMessageBytes   Name = "driver.Config.MaxMessageBytes"
	MaxEventBytes     Name = "driver.Config.MaxEventBytes" // internal/sse's limit, set from it
	FollowRedirects   Name = "driver.Config.FollowRedirects"
	Header            Name = "driver.Config.Header"
)
