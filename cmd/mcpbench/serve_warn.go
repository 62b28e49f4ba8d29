package main

import "fmt"

// exposureWarning is serve's warning for a server that listens on addr,
// not a loopback address ("" when loopback): without --auth it has no
// authentication; with --auth it is guarded by a test fixture only (one
// client, tokens in memory), its secret and tokens in clear text without
// --tls.
func exposureWarning(addr string, loopback, auth, tls bool) string {
	if loopback {
		return ""
	}
	const keep = " (use --addr 127.0.0.1:PORT to keep it local)"
	if !auth {
		return fmt.Sprintf("mcpbench: WARNING: listening on %s, not a loopback address: the server accepts connections from the network and has no authentication%s\n", addr, keep)
	}
	clear := ""
	if !tls {
		clear = "; without --tls the client secret and the tokens cross the network in clear text"
	}
	return fmt.Sprintf("mcpbench: WARNING: listening on %s, not a loopback address: the server accepts connections from the network, guarded only by --auth's test authorization server (one client, tokens in memory)%s%s\n", addr, clear, keep)
}
