package netutil

import (
	"math/rand/v2"
	"net"
	"time"
)

// TCP keep-alive of mcpbench's connections (client and reference
// server): the first probe after KeepAliveIdle of silence plus up to
// KeepAliveJitter, then one every KeepAliveInterval plus up to a third of
// it, and KeepAliveCount unanswered probes end the connection.
const (
	KeepAliveIdle     = 30 * time.Second
	KeepAliveJitter   = 15 * time.Second
	KeepAliveInterval = 15 * time.Second
	KeepAliveCount    = 9
)

// KeepAlive returns one connection's keep-alive settings, with its own
// random idle time and interval. The jitter keeps connections opened
// together from probing together: thousands of sockets on loopback that
// probe in the same millisecond overflow the kernel's per-CPU packet
// backlog (net.core.netdev_max_backlog, 1000 by default; the drops show in
// /proc/net/softnet_stat), the dropped probes go unanswered, and nine
// rounds later every such connection fails with ETIMEDOUT. Seen without
// it: 3,437 of 20,000 idle GET streams broken ("timeout") 165 s after
// they opened together (30 s + 9 × 15 s). Safe for concurrent use.
func KeepAlive() net.KeepAliveConfig {
	return net.KeepAliveConfig{
		Enable:   true,
		Idle:     KeepAliveIdle + rand.N(KeepAliveJitter),
		Interval: KeepAliveInterval + rand.N(KeepAliveInterval/3),
		Count:    KeepAliveCount,
	}
}

// KeepAliveListener sets KeepAlive's settings on each TCP connection it
// accepts (a net.ListenConfig applies one setting to all of them); give
// it a listener made with keep-alive disabled (ListenConfig.KeepAlive -1).
type KeepAliveListener struct{ net.Listener }

// Accept implements net.Listener.
func (l KeepAliveListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		tc.SetKeepAliveConfig(KeepAlive()) //nolint:errcheck // not supported: no probes, as before
	}
	return c, err
}
