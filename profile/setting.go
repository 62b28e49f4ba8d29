package profile

import (
	"errors"
	"fmt"
	"strings"
)

// SettingError is a problem of settings that may be given outside the
// profile file (by the command line, in the CLI). Its text names each
// setting by its YAML path ("abort_on_fail.delay", "segment",
// "thresholds"); Text names them otherwise: the CLI renders them as its
// flags (cmd/mcpbench/settingflags.go). It may wrap a cause (Unwrap).
type SettingError struct {
	// Settings are the YAML paths the message names, in order.
	Settings []string
	// msg is the message, each setting written as {path}.
	msg string
	err error
}

// SettingErrorf is a SettingError of the settings that format names as
// {path}, or as {?path} for an aside that only another name adds ("" in
// Error, " (NAME)" in Text); args fill format's verbs (%w wraps, as in
// fmt.Errorf). A {path} not among settings stays as written.
func SettingErrorf(settings []string, format string, args ...any) *SettingError {
	e := fmt.Errorf(format, args...)
	return &SettingError{Settings: settings, msg: e.Error(), err: errors.Unwrap(e)}
}

// Error is the message with each setting named by its YAML path.
func (e *SettingError) Error() string { return e.Text(nil) }

// Text is the message with each setting named by name(path) (nil: the
// path itself).
func (e *SettingError) Text(name func(setting string) string) string {
	s := e.msg
	for _, p := range e.Settings {
		n := p
		if name != nil {
			n = name(p)
		}
		s = strings.ReplaceAll(s, "{"+p+"}", n)
		aside := ""
		if name != nil {
			aside = " (" + n + ")"
		}
		s = strings.ReplaceAll(s, "{?"+p+"}", aside)
	}
	return s
}

// cliSettings are the settings that the command line may give too,
// written {path} or {?path} in validation messages (AsSetting).
var cliSettings = []string{"checks", "thresholds", "get_stream", "oauth.client_id"}

// AsSetting is err as a *SettingError when its message names one of
// cliSettings as {path} or {?path}; err itself otherwise.
func AsSetting(err error) error {
	m := err.Error()
	var names []string
	for _, p := range cliSettings {
		if strings.Contains(m, "{"+p+"}") || strings.Contains(m, "{?"+p+"}") {
			names = append(names, p)
		}
	}
	if names == nil {
		return err
	}
	return &SettingError{Settings: names, msg: m, err: errors.Unwrap(err)}
}

// Unwrap is the cause the message wraps (nil: none).
func (e *SettingError) Unwrap() error { return e.err }

// SettingErrors appends to out every *SettingError in err's tree (through
// Unwrap() error and Unwrap() []error), in the order errors.As would
// find them.
func SettingErrors(err error, out []*SettingError) []*SettingError {
	if err == nil {
		return out
	}
	if se, ok := err.(*SettingError); ok {
		out = append(out, se)
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = SettingErrors(e, out)
		}
	case interface{ Unwrap() error }:
		out = SettingErrors(u.Unwrap(), out)
	}
	return out
}

// SaidWith is err's message with every setting a *SettingError in its
// tree names said by name (as Text does; a front end's words for a
// setting, e.g. its flag).
func SaidWith(err error, name func(setting string) string) string {
	m := err.Error()
	for _, se := range SettingErrors(err, nil) {
		m = strings.ReplaceAll(m, se.Error(), se.Text(name))
	}
	return m
}

// NamedWith is err with its message as SaidWith words it (err itself
// when it names no setting); errors.Is and errors.As see through it.
func NamedWith(err error, name func(setting string) string) error {
	if len(SettingErrors(err, nil)) == 0 {
		return err
	}
	return &namedError{err, name}
}

// namedError is an error whose settings are said by name.
type namedError struct {
	err  error
	name func(string) string
}

func (e *namedError) Error() string { return SaidWith(e.err, e.name) }
func (e *namedError) Unwrap() error { return e.err }
