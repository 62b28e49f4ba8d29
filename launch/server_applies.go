package launch

import (
	"os"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// embeddedParentEnv marks a child of --processes whose parent started the
// embedded reference server (the child gets its URL as --url): the
// profile's server: block configured that server, so it applies.
const embeddedParentEnv = "MCPBENCH_EMBEDDED_PARENT"

// serverNotApplicable names the profile's server: block not applicable
// when the target is an external server (workload.ServerNotApplicable):
// neither this process nor a --processes parent started the embedded
// server with it.
func (e *env) serverNotApplicable(plan *workload.Plan) []results.NotApplicable {
	if e.embedded || os.Getenv(embeddedParentEnv) == "1" {
		return nil
	}
	if n, ok := workload.ServerNotApplicable(plan.Profile.Server); ok {
		return []results.NotApplicable{n}
	}
	return nil
}

// childEnv is the environment of the --processes children: the parent's,
// marked when the parent runs the embedded server (embeddedParentEnv).
func (e *env) childEnv() []string {
	if !e.embedded {
		return nil
	}
	return append(os.Environ(), embeddedParentEnv+"=1")
}
