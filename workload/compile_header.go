package workload

import (
	"net/http"

	"github.com/mcpbench/mcpbench/driver"
)

// ShownHeader returns the plan's request headers for display, as
// driver.RedactHeader renders them ("Name: value", sorted, values of
// sensitive headers "[redacted]"), with every other value as the profile
// writes it (${NAME} unexpanded). An Authorization header made from the
// URL's userinfo is listed, redacted.
func (pl *Plan) ShownHeader() []string {
	h := make(http.Header, len(pl.Driver.Header))
	for k, v := range pl.Profile.Headers {
		h.Set(k, v)
	}
	for k, v := range pl.Driver.Header {
		if _, ok := h[k]; !ok {
			h[k] = v
		}
	}
	return driver.RedactHeader(h)
}
