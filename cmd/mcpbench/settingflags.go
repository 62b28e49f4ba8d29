package main

import (
	"strings"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/spf13/cobra"
)

// settingFlags maps the settings the library's errors name (their YAML
// paths: profile.SettingError) to the flags that give them here.
var settingFlags = map[string]string{
	"abort_on_fail":       "--abort-on-fail",
	"abort_on_fail.delay": "--abort-delay",
	"checks":              "--check",
	"env":                 "-e",
	"get_stream":          "--get-stream",
	"oauth.client_id":     "--oauth-client-id",
	"protocol":            "--protocol",
	"segment":             "--segment",
	"segment_sequence":    "--segment-sequence",
	"thresholds":          "--threshold",
}

// flagOf is the flag of setting s (s itself when no flag gives it).
func flagOf(s string) string {
	if f, ok := settingFlags[s]; ok {
		return f
	}
	return s
}

// cliText is err's message with every setting a *profile.SettingError
// in it names written as its flag, as the command line gives it.
func cliText(err error) string {
	m := err.Error()
	for _, se := range settingErrors(err, nil) {
		m = strings.ReplaceAll(m, se.Error(), se.Text(flagOf))
	}
	return m
}

// settingErrors appends the *profile.SettingError in err's tree.
func settingErrors(err error, out []*profile.SettingError) []*profile.SettingError {
	if err == nil {
		return out
	}
	if se, ok := err.(*profile.SettingError); ok {
		out = append(out, se)
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = settingErrors(e, out)
		}
	case interface{ Unwrap() error }:
		out = settingErrors(u.Unwrap(), out)
	}
	return out
}

// namedAsFlags makes the errors of c's commands (c's and its
// subcommands' RunE) name settings as their flags (cliText).
func namedAsFlags(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error { return asFlags(run(cmd, args)) }
	}
	for _, sub := range c.Commands() {
		namedAsFlags(sub)
	}
}

// asFlags is err with its message as cliText words it (err itself when it
// names no setting); errors.Is and errors.As see through it.
func asFlags(err error) error {
	if len(settingErrors(err, nil)) == 0 {
		return err
	}
	return &flagsError{err}
}

// flagsError is an error whose settings are named as flags.
type flagsError struct{ err error }

func (e *flagsError) Error() string { return cliText(e.err) }
func (e *flagsError) Unwrap() error { return e.err }
