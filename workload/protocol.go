package workload

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
)

// decideProtocol settles the protocol era once per run (cached for every
// session): with auto, the newest version that supports every feature
// the run uses, asked of the server (server/discover, driver.Negotiate);
// a run that needs sessions or resumption gets the newest session-based
// version unless the server speaks only 2026-07-28 (it refuses a legacy
// initialize), which it then gets. Features that cannot apply at the
// chosen version are switched off and named in the summary.
func (e *engine) decideProtocol(ctx context.Context) error {
	pl := e.pl
	needs := append(sessionFeatures(pl), resumeFeatures(pl)...)
	if pl.Driver.Protocol == driver.ProtocolAuto || pl.Driver.Protocol == "" {
		n, err := driver.Negotiate(ctx, &pl.Driver)
		switch {
		case err == nil && len(needs) > 0 && n.ModernOnly():
			// The server speaks no session-based version (it refuses a
			// legacy initialize): what needs sessions cannot apply and
			// is named below, rather than a run refused at every
			// initialize.
			pl.Driver.Protocol = n.Protocol
			e.protoWhy = fmt.Sprintf("chosen by auto: the server speaks only 2026-07-28 (%s), so %s, which %s sessions or resumption, cannot apply", n.Why, strings.Join(needs, " and "), needVerb(needs))
		case len(needs) > 0:
			pl.Driver.Protocol = driver.DefaultProtocol
			e.protoWhy = fmt.Sprintf("chosen by auto as the newest session-based version, which %s %s (2026-07-28 has no sessions and no resumption)", strings.Join(needs, " and "), needVerb(needs))
		default:
			if err != nil {
				// The class only: the sessions' errors show the cause,
				// once (the same failure follows at initialize).
				why := "server/discover failed (" + driver.Classify(err).String() + " error)"
				if ctx.Err() != nil {
					why = "server/discover interrupted" // Ctrl-C during set-up: no failure of the server's
				}
				n = driver.Negotiation{Protocol: driver.DefaultProtocol, Why: why + ": using the newest legacy version"}
			}
			pl.Driver.Protocol = n.Protocol
			e.protoWhy = "chosen by auto: " + n.Why
		}
	}
	if driver.IsModern(pl.Driver.Protocol) {
		if pl.ChurnRate > 0 {
			e.notApply(featChurn, pl.Driver.Protocol+" has no sessions (stateless): there is none to replace")
		}
		if pl.CheckDeleted {
			e.notApply(featCheckDeleted, pl.Driver.Protocol+" has no sessions (stateless): there is none to DELETE and probe")
		}
		if len(resumeFeatures(pl)) > 0 {
			e.notApply(featResume, pl.Driver.Protocol+" has no stream resumption: every cut request fails as stream-broken or is re-issued")
		}
		pl.ChurnRate, pl.CheckDeleted, pl.Driver.CheckDeleted = 0, false, false
		if len(pl.dynNames) > 0 { // correlate.go
			return profile.SettingErrorf([]string{"protocol"}, "%w: op %s: its tool, prompt or uri is a template, but %s sends it in the Mcp-Name header, set once per op: give it a fixed one, or {protocol} 2025-11-25", ErrSetup, pl.dynNames[0], pl.Driver.Protocol)
		}
		for i, op := range pl.Ops {
			if len(pl.Scenarios) > 0 && driver.RemovedInModern(op.Method) {
				return fmt.Errorf("%w: scenario step %s: %s has no %s (removed by SEP-2575)", ErrSetup, op.Name, pl.Driver.Protocol, op.Method)
			}
			if len(pl.Scenarios) == 0 && driver.RemovedInModern(op.Method) && pl.weight(i) > 0 {
				pl.disable(i)
				e.notes = append(e.notes, fmt.Sprintf("%s left out of the mix: %s has no %s (removed by SEP-2575)", op.Name, pl.Driver.Protocol, op.Method))
			}
		}
		if len(pl.Scenarios) == 0 && pl.cum[len(pl.cum)-1] == 0 {
			return fmt.Errorf("%w: no op of the mix exists in %s", ErrSetup, pl.Driver.Protocol)
		}
		e.modernLogLevel()
	}
	if err := driver.PrepareOps(ctx, &pl.Driver, pl.Ops); err != nil {
		return fmt.Errorf("%w: %v", ErrSetup, err)
	}
	return nil
}

// needVerb is "needs" for one feature, "need" for more.
func needVerb(needs []string) string {
	if len(needs) > 1 {
		return "need"
	}
	return "needs"
}

// sessionFeatures names the features of plan p that need sessions (the
// legacy versions 2025-03-26 … 2025-11-25).
func sessionFeatures(p *Plan) []string {
	var out []string
	if p.ChurnRate > 0 {
		out = append(out, "session churn")
	}
	if p.CheckDeleted {
		out = append(out, "the deleted-session check")
	}
	return out
}
