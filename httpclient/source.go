package httpclient

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
)

// Source addresses: connections spread over several local addresses, so
// more than one address's ~64k ephemeral ports can reach one server
// address (k6's --local-ips).

// maxSourceAddrs bounds the addresses ParseSourceAddrs expands.
const maxSourceAddrs = 1 << 16

// ParseSourceAddrs parses a list of local IP addresses, comma-separated,
// each an address ("127.0.0.2"), a range ("127.0.0.2-127.0.0.9") or a
// CIDR ("127.0.0.0/29": every address of it). It errs on a malformed
// entry, naming it, or on more than maxSourceAddrs addresses.
func ParseSourceAddrs(spec string) ([]net.IP, error) {
	var out []net.IP
	add := func(a netip.Addr) error {
		if len(out) >= maxSourceAddrs {
			return fmt.Errorf("source addresses: more than %d", maxSourceAddrs)
		}
		out = append(out, net.IP(a.AsSlice()))
		return nil
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var from, to netip.Addr
		switch {
		case strings.Contains(part, "/"):
			p, err := netip.ParsePrefix(part)
			if err != nil {
				return nil, fmt.Errorf("source address %q: not a CIDR prefix", part)
			}
			p = p.Masked()
			from, to = p.Addr(), lastOf(p)
		case strings.Contains(part, "-"):
			a, b, _ := strings.Cut(part, "-")
			var e1, e2 error
			from, e1 = netip.ParseAddr(strings.TrimSpace(a))
			to, e2 = netip.ParseAddr(strings.TrimSpace(b))
			if e1 != nil || e2 != nil || from.Is4() != to.Is4() || to.Less(from) {
				return nil, fmt.Errorf("source address range %q: want FIRST-LAST of one family, FIRST ≤ LAST", part)
			}
		default:
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("source address %q: not an IP address", part)
			}
			from, to = a, a
		}
		for a := from; ; a = a.Next() {
			if err := add(a); err != nil {
				return nil, err
			}
			if a == to {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("source addresses %q: none given", spec)
	}
	return out, nil
}

// lastOf is the last address of prefix p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// sourcePicker hands out local addresses round robin, one per connection.
// Safe for concurrent use; a nil picker picks none (the kernel chooses).
type sourcePicker struct {
	ips  []net.IP
	next atomic.Uint64
}

func newSourcePicker(ips []net.IP) *sourcePicker {
	if len(ips) == 0 {
		return nil
	}
	return &sourcePicker{ips: ips}
}

// pick returns the local address for the next connection (nil: any).
func (s *sourcePicker) pick() net.Addr {
	if s == nil {
		return nil
	}
	i := s.next.Add(1) - 1
	return &net.TCPAddr{IP: s.ips[i%uint64(len(s.ips))]}
}
