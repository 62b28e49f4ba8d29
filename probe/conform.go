package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// Sentences the checks of this file cite.
const (
	specHost = `2025-11-25 transports §Security Warning: "Without these protections, attackers could use DNS rebinding to interact with local MCP servers from remote websites." ` +
		`(a rebound page's same-origin GET carries no Origin: only the Host header shows the foreign name, so local servers check it too)`
	specSameOrigin = `2025-11-25 transports §Security Warning: "If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden." ` +
		`(the server's own origin is valid: a server that refuses it refuses every browser client)`
	specCrossTalk = `2025-11-25 transports §Sending Messages: messages sent before the response "SHOULD relate to the originating client request"; ` +
		`§Multiple Connections: "The server MUST send each of its JSON-RPC messages on only one of the connected streams"`
	specPing = `2025-11-25 basic/utilities/ping: "The receiver MUST respond promptly with an empty response" ("result": {})`
)

// The cross-talk case.
const (
	crossTalkName = "concurrent calls: no cross-talk between streams"
	crossTalkWant = "each call's stream: its own messages"
)

// probeHost is the foreign Host sent (with the URL's port).
const probeHost = "evil.example"

// probeConcurrent is the number of calls the cross-talk check runs at once.
const probeConcurrent = 3

// Options name the tools Run calls, for servers whose tools differ
// from the reference server's. The zero value uses the reference server's
// progress tool (or a read-only tool without required arguments).
type Options struct {
	// StreamTool is the tool called with a progressToken to get a streaming
	// answer (and, probeConcurrent times at once, for the cross-talk
	// check); "" picks one. A name the server does not list makes those
	// checks "not run: no tool named …".
	StreamTool string
	// StreamArgs are its arguments, a JSON object ("" means {"count":3} for
	// the reference progress tool, {} otherwise).
	StreamArgs string
	// CloseArgs are the arguments of a call of the stream tool that makes
	// the server close its stream early with a retry hint (SSE polling);
	// "" means close_after (and retry_ms when the tool has it) for a
	// progress tool that takes close_after, and no such call otherwise.
	CloseArgs string
}

// Validate reports arguments that are not JSON objects, naming the flag.
func (o Options) Validate() error {
	for _, a := range []struct{ flag, v string }{{"--stream-args", o.StreamArgs}, {"--close-args", o.CloseArgs}} {
		if a.v == "" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(a.v), &m); err != nil || m == nil {
			return fmt.Errorf("%s %q: not a JSON object (want e.g. '{\"count\":3}')", a.flag, clip(a.v, 80))
		}
	}
	if (o.StreamArgs != "" || o.CloseArgs != "") && o.StreamTool == "" {
		return fmt.Errorf("--stream-args and --close-args need --stream-tool: they are the arguments of that tool")
	}
	return nil
}

// hostCases checks DNS rebinding protection apart from the Origin check: a
// foreign Host without Origin must be refused (on a local server), and the
// server's own origin must be accepted.
func (p *prober) hostCases(ctx context.Context) {
	const hostName, hostWant = "foreign Host, no Origin (DNS rebinding)", "an error status (403 or 421)"
	u, err := url.Parse(p.u)
	if err != nil {
		return
	}
	if !localHost(u.Hostname()) {
		p.na(hostName, hostWant, specHost, "the server is not on a loopback or private address ("+u.Hostname()+"): DNS rebinding reaches local servers")
	} else {
		host := probeHost
		if port := u.Port(); port != "" {
			host = net.JoinHostPort(probeHost, port)
		}
		a := p.send(ctx, p.harmless().with("Host", host, "Origin", ""))
		detail := "Host: " + host + ": " + a.describe()
		if a.status >= 200 && a.status < 300 {
			detail += ": served, as a page of a rebound name would be"
		}
		p.check(hostName, hostWant, specHost, a, a.status >= 400 && a.status < 500, detail)
	}
	origin := u.Scheme + "://" + u.Host
	a := p.send(ctx, p.harmless().with("Origin", origin))
	detail := "Origin: " + origin + ": " + a.describe()
	if a.status == http.StatusForbidden {
		detail += ": the server refuses its own origin, so every browser client"
	}
	p.check("same-origin Origin accepted", "served (2xx)", specSameOrigin, a, a.status >= 200 && a.status < 300, detail)
}

// localHost reports whether h names a loopback or private address.
func localHost(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified())
}

// pingCase checks that ping returns an empty result.
func (p *prober) pingCase(ctx context.Context) {
	const name, want = "ping returns {}", `result {}`
	a := p.send(ctx, p.call("ping", "", ""))
	m, ok := a.message()
	switch {
	case !ok || m.Kind != jsonrpc.KindResponse:
		p.check(name, want, specPing, a, false, a.describe()+" without a JSON-RPC response")
	case m.Error != nil:
		e := jsonrpc.ParseError(m.Error)
		p.check(name, want, specPing, a, false, fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message))
	default:
		var obj map[string]json.RawMessage
		empty := json.Unmarshal(m.Result, &obj) == nil && obj != nil && len(obj) == 0
		detail := ""
		if !empty {
			detail = "result " + clip(string(bytes.TrimSpace(m.Result)), 120)
		}
		p.check(name, want, specPing, a, empty, detail)
	}
}

// concurrentCase runs probeConcurrent calls of the stream tool at once,
// each with its own progressToken, and checks that no call's stream
// carries a sibling's progress or response.
func (p *prober) concurrentCase(ctx context.Context, args string) {
	const name, want = crossTalkName, crossTalkWant
	qs := make([]req, probeConcurrent)
	tokens := make([]string, probeConcurrent)
	for i := range qs {
		tokens[i] = "mcpbench-probe-c" + strconv.Itoa(i+1)
		qs[i] = p.toolCall(args, tokens[i])
	}
	as := make([]answer, len(qs))
	var wg sync.WaitGroup
	for i := range qs {
		p.r.Requests++
		wg.Go(func() { as[i] = p.do(ctx, qs[i]) })
	}
	wg.Wait()
	var wrong, counts, notSSE []string
	for i, a := range as {
		p.seen(&a, qs[i])
		if a.status != http.StatusOK {
			p.check(name, want, specCrossTalk, a, false, fmt.Sprintf("call %d (id %d): %s", i+1, qs[i].id, a.describe()))
			return
		}
		if !a.sse {
			notSSE = append(notSSE, strconv.FormatInt(qs[i].id, 10))
		}
		own := 0
		for _, e := range a.events {
			m, err := jsonrpc.Parse([]byte(e.Data))
			if e.Data == "" || err != nil {
				continue
			}
			var tk string
			switch {
			case m.Kind == jsonrpc.KindResponse && !jsonrpc.IDEqual(m.ID, qs[i].id):
				wrong = append(wrong, fmt.Sprintf("the stream of request %d carried the response to request %s", qs[i].id, m.ID))
			case string(m.Method) != "notifications/progress" || json.Unmarshal(jsonrpc.Field(m.Params, "progressToken"), &tk) != nil:
			case tk == tokens[i]:
				own++
			default:
				of := "another request"
				for j, t := range tokens {
					if t == tk {
						of = "request " + strconv.FormatInt(qs[j].id, 10)
					}
				}
				wrong = append(wrong, fmt.Sprintf("the stream of request %d carried progress of %s (token %q)", qs[i].id, of, tk))
			}
		}
		counts = append(counts, fmt.Sprintf("%d: %d own progress", qs[i].id, own))
	}
	if len(notSSE) == len(as) {
		p.na(name, want, specCrossTalk, "the calls were answered as JSON: no stream to share")
		return
	}
	sort.Strings(wrong)
	calls := fmt.Sprintf("%d calls of %s%s at once (request %s)", len(as), p.tool.name, args, strings.Join(counts, ", "))
	if len(wrong) > 0 {
		p.add(Case{Case: name, Expected: want, Spec: specCrossTalk, Result: Differs, Status: http.StatusOK,
			Detail: calls + ": " + strings.Join(firstN(wrong, 4), "; ")})
		return
	}
	p.add(Case{Case: name, Expected: want, Spec: specCrossTalk, Result: OK, Status: http.StatusOK, Detail: calls})
}

// firstN returns s cut to n entries, saying how many more there were.
func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
}
