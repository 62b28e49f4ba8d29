package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/workload"
	"go.yaml.in/yaml/v3"
)

// How a child of --processes gets its test: the parent writes the
// resolved profile (every flag applied, the embedded server's URL in
// it) and what the child's run.json records of the parent's command
// into a launch file, mode 0600 in a directory of its own (0700, removed
// when the parent's Test closes), and starts the child with the
// subcommand, ChildFileFlag=FILE, and what Processes adds (--segment,
// --start-at, --out, --no-progress, --target-pid: never secret). The
// user's secrets (header values, URL credentials, -e values as typed)
// are in that file only, never in the child's argv (world-readable:
// /proc/PID/cmdline, ps) nor in its environment; ${NAME} references stay
// references, expanded by the child from the environment it inherits,
// as the pods of k8s-job do from their Secret. No flag is re-serialised:
// a new flag needs nothing here.

// ChildFileFlag is the hidden flag of run, sweep and soak that names a
// child's launch file (Spec.LoadChild).
const ChildFileFlag = "launch-file"

// StatusEnv names the file a child writes its status to (one word):
// "setup" when its run never started, no session could be set up
// (workload.ErrSetup). The parent reads it instead of the child's
// stderr.
const StatusEnv = "MCPBENCH_CHILD_STATUS"

// statusSetup is a child's status when its run never started.
const statusSetup = "setup"

// The kinds of a child's run.
const (
	childRun       = "run"        // a segment of run's test
	childSoak      = "soak"       // a segment of soak's test
	childSweepStep = "sweep-step" // a segment of one run of a sweep's step
)

// childFile is a launch file.
type childFile struct {
	Kind string `json:"kind"`
	// Profile is the resolved profile, YAML; Source, Dir, ThresholdFlags
	// and CheckFlags the fields YAML does not carry.
	Profile        string `json:"profile"`
	Source         string `json:"source"`
	Dir            string `json:"dir"`
	ThresholdFlags int    `json:"threshold_flags"`
	CheckFlags     int    `json:"check_flags"`

	Argv  []string          `json:"argv"`  // the parent's command line, as given (run.json redacts it)
	Flags map[string]string `json:"flags"` // the parent's flags, as given

	Procs      int           `json:"procs,omitempty"`
	Checkpoint time.Duration `json:"checkpoint,omitempty"`
	Settle     bool          `json:"settle,omitempty"` // a sessions sweep's step: memory read settled
	Embedded   bool          `json:"embedded,omitempty"`
}

// writeChildFile writes the launch file of a child of kind running p
// into dir (the parent's private directory) and returns its path.
func (e *env) writeChildFile(kind string, p *workload.Profile, settle bool) (string, error) {
	if e.private == "" {
		d, err := os.MkdirTemp("", "mcpbench-launch-")
		if err != nil {
			return "", err
		}
		e.private = d
		e.closers = append(e.closers, func() { os.RemoveAll(d) })
	}
	y, err := yaml.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("the children's profile: %w", err)
	}
	cf := childFile{Kind: kind, Profile: string(y), Source: p.Source, Dir: p.Dir(), ThresholdFlags: p.ThresholdFlags, CheckFlags: p.CheckFlags,
		Argv: e.spec.Argv, Flags: e.spec.Flags, Procs: e.spec.Procs, Checkpoint: e.spec.Checkpoint, Settle: settle, Embedded: e.embedded}
	data, err := json.Marshal(&cf)
	if err != nil {
		return "", err
	}
	e.childFiles++
	path := filepath.Join(e.private, fmt.Sprintf("launch-%d.json", e.childFiles))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// LoadChild makes s the spec of a child of --processes from its launch
// file path: the profile and the parent's command line and flags (to
// which s's Argv and Flags, the child's own, are added), and the kind of
// run its parent asked for. The other fields (the segment, start, results
// directory, progress and target process) stay as the child's flags set
// them. Errors are usage errors, naming the file, never a value.
func (s *Spec) LoadChild(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return Usagef("--%s: %v: this flag is how mcpbench starts its own --processes children; do not give it", ChildFileFlag, err)
	}
	var cf childFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return Usagef("--%s %s: %v", ChildFileFlag, path, err)
	}
	p, errs := workload.ParseProfile([]byte(cf.Profile))
	if len(errs) > 0 {
		return WithExitCode(ExitUsage, &workload.ProfileError{Source: cf.Source, Errs: errs})
	}
	p.Source, p.ThresholdFlags, p.CheckFlags = cf.Source, cf.ThresholdFlags, cf.CheckFlags
	p.SetDir(cf.Dir)
	var extra []string
	if len(s.Argv) > 2 {
		for _, a := range s.Argv[2:] {
			if !strings.HasPrefix(a, "--"+ChildFileFlag) {
				extra = append(extra, a)
			}
		}
	}
	flags := maps.Clone(cf.Flags)
	if flags == nil {
		flags = map[string]string{}
	}
	for k, v := range s.Flags {
		if k != ChildFileFlag {
			flags[k] = v
		}
	}
	s.Profile, s.Argv, s.Flags = p, append(cf.Argv[:len(cf.Argv):len(cf.Argv)], extra...), flags
	if s.Procs == 0 {
		s.Procs = cf.Procs
	}
	if s.Checkpoint == 0 {
		s.Checkpoint = cf.Checkpoint
	}
	s.child = &cf
	return nil
}

// adoptChild checks a child's spec: it runs one segment into its --out.
func (e *env) adoptChild() error {
	if e.spec.Out == "" || e.spec.NoResults {
		return Usagef("--%s: a child of --processes writes its segment into --out", ChildFileFlag)
	}
	return nil
}

// writeStatus writes this child's status (StatusEnv) after its run:
// "setup" when runErr is workload.ErrSetup; nothing otherwise, or
// outside a child.
func (e *env) writeStatus(runErr error) {
	path := os.Getenv(StatusEnv)
	if e.spec.child == nil || path == "" || !errors.Is(runErr, workload.ErrSetup) {
		return
	}
	os.WriteFile(path, []byte(statusSetup+"\n"), 0o600)
}

// readStatus is the status a child wrote to path ("" none).
func readStatus(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
