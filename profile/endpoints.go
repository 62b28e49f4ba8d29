package profile

import (
	"fmt"
	"net/http"

	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/secret"
)

// Several endpoints: a deployment's replicas reached without a load
// balancer. Sessions are spread over url and urls by VU (VU i on endpoint
// i mod n), each staying on its endpoint (churn included); results are
// kept per endpoint and in total. Source addresses spread connections
// over local addresses.

// moreEndpoints resolves urls (the endpoints after url), with the
// profile's headers; errors name the entry.
func (p *Profile) moreEndpoints(lookup secret.LookupFunc) ([]*Endpoint, []error) {
	var out []*Endpoint
	var errs []error
	for i, u := range p.URLs {
		h := http.Header{}
		for k, v := range p.Headers {
			h[k] = []string{v}
		}
		ep, es := ResolveEndpoint(u, h, lookup)
		for _, e := range es {
			errs = append(errs, fmt.Errorf("urls[%d]: %w", i, e))
		}
		out = append(out, ep)
	}
	if len(p.URLs) > 0 && p.URL == "" {
		errs = append(errs, fmt.Errorf("urls: given without url (the first endpoint)"))
	}
	return out, errs
}

// validateEndpoints checks urls and source_addrs; it returns the
// endpoints of urls.
func (p *Profile) validateEndpoints(lookup secret.LookupFunc) ([]*Endpoint, []error) {
	more, errs := p.moreEndpoints(lookup)
	if p.SourceAddrs != "" {
		if _, err := httpclient.ParseSourceAddrs(p.SourceAddrs); err != nil {
			errs = append(errs, fmt.Errorf("source_addrs: %w", err))
		}
	}
	return more, errs
}
