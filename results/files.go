package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// RunInfo is run.json: what ran, so a result can be understood and
// reproduced later.
type RunInfo struct {
	Tool      string    `json:"tool"`
	Version   string    `json:"version"`
	GoVersion string    `json:"go_version"`
	SDK       string    `json:"go_sdk,omitempty"` // go-sdk version of the embedded server
	OS        string    `json:"os"`
	Arch      string    `json:"arch"`
	NumCPU    int       `json:"num_cpu"`
	Started   time.Time `json:"started"`
	Command   []string  `json:"command"` // arguments, header values redacted

	Target             string `json:"target"`
	Embedded           bool   `json:"embedded_server"`
	ServerMode         string `json:"server_mode,omitempty"`
	ProtocolRequested  string `json:"protocol_requested"`
	ProtocolNegotiated string `json:"protocol_negotiated"`
	// NotApplicable are the requested features the run found it could not
	// apply before the load started (see Summary.NotApplicable).
	NotApplicable []NotApplicable `json:"not_applicable,omitempty"`
	// HTTPProtocol is what the connections speak ("h2", "h2c",
	// "http/1.1"; the others after the most used one); Proxy the proxy
	// the load went through and where it came from ("" direct).
	HTTPProtocol string `json:"http_protocol,omitempty"`
	Proxy        string `json:"proxy,omitempty"`

	Profile string            `json:"profile"`
	Ops     []string          `json:"ops"`     // op names, as the interval files name them
	Spec    any               `json:"spec"`    // the effective profile (flags applied)
	Flags   map[string]string `json:"flags"`   // flags given on the command line
	Headers []string          `json:"headers"` // redacted
	Seed    int64             `json:"seed"`
	// Segment is the execution segment the run was (--segment, or one
	// process of --processes); nil for the whole test.
	Segment *SegmentInfo `json:"segment,omitempty"`
	// Merged lists the results directories a merged run was made of
	// (mcpbench merge); nil for a run.
	Merged []string `json:"merged_from,omitempty"`
}

// WriteJSON writes v to path atomically (a temp file renamed into place),
// so a reader never sees half a file. The file gets the mode os.Create
// gives (0666 less the umask), like the other result files.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// createTemp creates a new file beside path, named ".<base>.<random>",
// with mode 0666 less the umask: os.CreateTemp would give 0600, and
// reading the umask to chmod afterwards is not safe in a multi-threaded
// process (syscall.Umask sets it while reading it).
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	var err error
	for range 100 { // names collide only by chance, or with a stale file
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36))
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("create a temporary file for %s: %w", base, err)
}

// ReadSummary reads a summary.json.
func ReadSummary(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}
