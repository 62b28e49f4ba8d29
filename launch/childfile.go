package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/workload"
)

// How a child of --processes gets its test: the parent writes the
// resolved profile (every flag applied, the embedded server's URL in
// it) and what the child's run.json records of the parent's command as
// one JSON document, its launch file, to the child's standard input (a
// pipe: nothing on disk, so a full disk or a file size limit cannot stop
// the launch, and nothing to remove), and starts the child with the
// subcommand, --launch-file=- and what Processes adds (--segment,
// --start-at, --out, --no-progress, --target-pid: never secret). The
// user's secrets (header values, URL credentials, -e values as typed)
// reach the child through that pipe only, never its argv
// (world-readable: /proc/PID/cmdline, ps) nor its environment; ${NAME}
// references stay references, expanded by the child from the environment
// it inherits, as the pods of k8s-job do from their Secret. No flag is
// re-serialised: a new flag needs nothing here. (LoadChild also reads a
// launch file from a path.)

// ChildFileFlag is the hidden flag of run, sweep and soak that names a
// child's launch file (Spec.LoadChild).
const ChildFileFlag = "launch-file"

// StatusEnv is set in a child's environment to the file descriptor of
// the pipe it writes its status to (one word): "setup" when its run
// never started, no session could be set up (workload.ErrSetup). The
// parent reads it (Child.Status) instead of the child's stderr; a pipe,
// so that nothing is left on disk whatever ends the parent.
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
	// Profile is the resolved profile as JSON (as run.json's spec: every
	// field, nil and empty kept apart); Dir, ThresholdFlags and CheckFlags
	// the fields it does not carry.
	Profile        json.RawMessage `json:"profile"`
	Dir            string          `json:"dir"`
	ThresholdFlags int             `json:"threshold_flags"`
	CheckFlags     int             `json:"check_flags"`

	Argv  []string          `json:"argv"`  // the parent's command line, as given (run.json redacts it)
	Flags map[string]string `json:"flags"` // the parent's flags, as given

	Procs      int           `json:"procs,omitempty"`
	Checkpoint time.Duration `json:"checkpoint,omitempty"`
	Settle     bool          `json:"settle,omitempty"` // a sessions sweep's step: memory read settled
	Embedded   bool          `json:"embedded,omitempty"`
}

// childFileOf is the launch file of a child of kind running p.
func (e *env) childFileOf(kind string, p *profile.Profile, settle bool) ([]byte, error) {
	pj, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("the children's profile: %w", err)
	}
	cf := childFile{Kind: kind, Profile: pj, Dir: p.Dir(), ThresholdFlags: p.ThresholdFlags, CheckFlags: p.CheckFlags,
		Argv: e.spec.Argv, Flags: e.spec.Flags, Procs: e.spec.Procs, Checkpoint: e.spec.Checkpoint, Settle: settle, Embedded: e.embedded}
	return json.Marshal(&cf)
}

// LoadChild makes s the spec of a child of --processes from its launch
// file path ("-": standard input, as Processes gives it): the profile and the parent's command line and flags (to
// which s's Argv and Flags, the child's own, are added), and the kind of
// run its parent asked for. The other fields (the segment, start, results
// directory, progress and target process) stay as the child's flags set
// them. Errors are usage errors, naming the file, never a value.
func (s *Spec) LoadChild(path string) error {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return Usagef("--%s: %v: this flag is how mcpbench starts its own %s children; do not give it", ChildFileFlag, err, setting.Processes)
	}
	var cf childFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return Usagef("--%s %s: %v", ChildFileFlag, path, err)
	}
	p := &profile.Profile{}
	if err := json.Unmarshal(cf.Profile, p); err != nil {
		return Usagef("--%s %s: the profile: %v", ChildFileFlag, path, err)
	}
	p.ThresholdFlags, p.CheckFlags = cf.ThresholdFlags, cf.CheckFlags
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
		return Usagef("--%s: a child of %s writes its segment into %s", ChildFileFlag, setting.Processes, setting.Out)
	}
	return nil
}

// writeStatus writes this child's status to its status pipe (StatusEnv)
// after its run: "setup" when runErr is workload.ErrSetup; nothing
// otherwise, or outside a child.
func (e *env) writeStatus(runErr error) {
	fd, err := strconv.Atoi(os.Getenv(StatusEnv))
	if e.spec.child == nil || err != nil || fd < 3 || !errors.Is(runErr, workload.ErrSetup) {
		return
	}
	f := os.NewFile(uintptr(fd), "status")
	f.Write([]byte(statusSetup + "\n"))
	f.Close()
}
