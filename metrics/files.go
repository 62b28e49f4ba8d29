package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

	Profile string            `json:"profile"`
	Spec    any               `json:"spec"`    // the effective profile (flags applied)
	Flags   map[string]string `json:"flags"`   // flags given on the command line
	Headers []string          `json:"headers"` // redacted
	Seed    int64             `json:"seed"`
}

// WriteJSON writes v to path atomically (a temp file renamed into place),
// so a reader never sees half a file.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
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
