package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpbench/mcpbench/refserver"
	"github.com/spf13/pflag"
)

// serveNetFlags are serve's TLS, HTTP/2 and authorization flags.
type serveNetFlags struct {
	tls, mtls, http2Only, h2c, auth bool
	cert, key, clientCA, tlsDir     string
	hosts                           []string
	authClientID                    string
	authTTL                         time.Duration
}

// authSecretEnv holds the client secret of serve --auth: the variable
// mcpbench run reads by default, so one export serves both.
const authSecretEnv = "MCPBENCH_OAUTH_CLIENT_SECRET"

func (f *serveNetFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&f.tls, "tls", false, "serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with a generated certificate (its SHA-256 fingerprint is printed) or --tls-cert/--tls-key")
	fl.StringVar(&f.cert, "tls-cert", "", "with --tls: the server's certificate (PEM) instead of a generated one")
	fl.StringVar(&f.key, "tls-key", "", "with --tls-cert: its private key (PEM)")
	fl.StringArrayVar(&f.hosts, "tls-host", nil, "with --tls: one more DNS name or IP for the generated certificate (repeatable; 127.0.0.1, ::1 and localhost are always in)")
	fl.StringVar(&f.tlsDir, "tls-dir", "", "with --tls: write the generated CA (ca.pem; for mcpbench run --ca) and, with --mtls, client.pem and client-key.pem into this directory")
	fl.BoolVar(&f.mtls, "mtls", false, "with --tls: require a client certificate signed by the generated CA (mutual TLS); one is generated (see --tls-dir)")
	fl.StringVar(&f.clientCA, "client-ca", "", "with --tls: require client certificates signed by a CA of this PEM file (mutual TLS)")
	fl.BoolVar(&f.http2Only, "http2-only", false, "with --tls: offer only HTTP/2 (ALPN h2); an HTTP/1.1-only client is refused in the handshake")
	fl.BoolVar(&f.h2c, "h2c", false, "without --tls: also accept HTTP/2 with prior knowledge (h2c)")
	fl.BoolVar(&f.auth, "auth", false, "require OAuth bearer tokens on /mcp and serve a built-in authorization server (client credentials); the client secret is read from $"+authSecretEnv)
	fl.StringVar(&f.authClientID, "auth-client-id", "mcpbench", "with --auth: the client id")
	fl.DurationVar(&f.authTTL, "auth-token-ttl", time.Hour, "with --auth: how long a token is valid")
}

// options sets the flags in opts. Errors name the flag.
func (f *serveNetFlags) options(opts *refserver.Options, set func(string) bool) error {
	for _, n := range []string{"tls-cert", "tls-key", "tls-host", "tls-dir", "mtls", "client-ca", "http2-only"} {
		if set(n) && !f.tls {
			return fmt.Errorf("--%s needs --tls", n)
		}
	}
	if f.tls {
		opts.TLS = &refserver.TLSOptions{CertFile: f.cert, KeyFile: f.key, Hosts: f.hosts, ClientCAFile: f.clientCA,
			RequireClientCert: f.mtls, HTTP2Only: f.http2Only}
	}
	if f.h2c && f.tls {
		return fmt.Errorf("--h2c: plain HTTP only (with --tls, ALPN offers h2)")
	}
	opts.H2C = f.h2c
	if (set("auth-client-id") || set("auth-token-ttl")) && !f.auth {
		return fmt.Errorf("--auth-client-id and --auth-token-ttl need --auth")
	}
	if f.auth {
		secret := os.Getenv(authSecretEnv)
		if secret == "" {
			return fmt.Errorf("--auth: set the client secret in $%s (the variable mcpbench run reads too)", authSecretEnv)
		}
		opts.Auth = &refserver.AuthOptions{ClientID: f.authClientID, ClientSecret: secret, TokenTTL: f.authTTL}
	}
	return nil
}

// describe prints what a client needs: the certificate's fingerprint, the
// files written, the authorization server.
func (f *serveNetFlags) describe(w io.Writer, srv *refserver.Server) error {
	if fp := srv.Fingerprint(); fp != "" {
		fmt.Fprintf(w, "TLS certificate SHA-256 fingerprint %s\n", fp)
	}
	if f.tlsDir != "" {
		paths, err := srv.WriteTLSFiles(f.tlsDir)
		if err != nil {
			return fmt.Errorf("--tls-dir: %w", err)
		}
		for _, p := range paths {
			fmt.Fprintf(w, "wrote %s\n", p)
		}
	}
	if f.auth {
		fmt.Fprintf(w, "OAuth: bearer tokens required; authorization server (client credentials) at %s, client id %q, secret from $%s, tokens valid %v\n",
			srv.URL()[:len(srv.URL())-len("/mcp")], f.authClientID, authSecretEnv, f.authTTL)
	}
	return nil
}

// stopped prints the server's counters when serve stops, the
// authorization server's with --auth.
func (f *serveNetFlags) stopped(w io.Writer, srv *refserver.Server) {
	st := srv.Stats()
	fmt.Fprintf(w, "stopping: %d tool executions, %d sessions opened, %d closed; count tool: %d keys, %d executed more than once\n",
		st.ToolCalls, st.SessionsOpened, st.SessionsClosed, len(st.Executions), st.DoubleExecutions)
	if !f.auth {
		return
	}
	a := srv.AuthStats()
	fmt.Fprintf(w, "authorization: %d tokens issued, %d token requests refused; %d requests challenged (401), %d of them with an expired token; %d authorized\n",
		a.TokensIssued, a.TokenRefusals, a.Challenges, a.Expired, a.Authorized)
}
