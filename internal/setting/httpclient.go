package setting

// The settings of httpclient.Options (and the TLSFiles and OAuthConfig it
// holds) that its errors, and driver's, name.
const (
	HTTPVersion       Name = "httpclient.Options.HTTP"
	Proxy             Name = "httpclient.Options.Proxy" // also NetStats.Proxies' source of a proxy it names
	ConnectTimeout    Name = "httpclient.Options.ConnectTimeout"
	Insecure          Name = "httpclient.Options.Insecure"
	CAFile            Name = "httpclient.TLSFiles.CAFile"
	CertFile          Name = "httpclient.TLSFiles.CertFile"
	KeyFile           Name = "httpclient.TLSFiles.KeyFile"
	TLSServerName     Name = "httpclient.TLSFiles.ServerName"
	OAuthClientID     Name = "httpclient.OAuthConfig.ClientID"
	OAuthClientSecret Name = "httpclient.OAuthConfig.ClientSecret"
)
