// Package setting names library settings in error texts, so that a front
// end can say them its own way. A library error names the setting that
// governs it by its library name, the package-qualified field
// ("driver.Config.MaxMessageBytes"): "response larger than
// max_message_bytes 64MiB; raise it with driver.Config.MaxMessageBytes".
// A front end installs its own words for the names once, with SetNames
// (mcpbench's CLI: its flags, cmd/mcpbench/settingflags.go), and the same
// error then says "raise it with --max-message-bytes" everywhere its text
// goes (stderr, summary.json's examples, the report).
//
// The mechanism, for every library package:
//   - a setting is a Name: one constant per setting, in a file per package
//     that owns the fields (driver.go, httpclient.go);
//   - an error whose text names settings is an *Error (found with
//     errors.As; Names says which settings), or, inside a composite error
//     (a hint in a larger text), a Name formatted with %s or String;
//   - Name.String says the name as installed now, so a text is said right
//     whenever it is made after SetNames, and *Error renders its text when
//     read, so a package-level sentinel made before SetNames reads right
//     too.
//
// Nothing here runs on a success path: names are said only when an error
// is made or read.
package setting

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// Name is a setting's library name: the package-qualified field that sets
// it ("driver.Config.RequestTimeout", "httpclient.TLSFiles.CA").
type Name string

// String returns n as the installed names say it (SetNames), or n itself
// when none is installed or it has no words for n.
func (n Name) String() string {
	if f := names.Load(); f != nil {
		if s := (*f)(n); s != "" {
			return s
		}
	}
	return string(n)
}

var names atomic.Pointer[func(Name) string]

// SetNames installs f as the words for settings: Name.String returns f(n)
// (n itself where f returns ""); nil restores the library names. A front
// end calls it once, before it makes or reads errors (cmd/mcpbench: at
// init). Safe for concurrent use.
func SetNames(f func(Name) string) {
	if f == nil {
		names.Store(nil)
		return
	}
	names.Store(&f)
}

// Error is an error whose text names the settings that govern it.
// Its text is Format with its i-th %s replaced by Names[i] as said when
// Error is called (Name.String); Format holds no other verb (%% is a
// percent sign). Err, when set, is the error it wraps for errors.Is and
// errors.As; its text is not added (Format says all). Immutable once made:
// safe for concurrent use.
type Error struct {
	Format string
	Names  []Name
	Err    error
}

func (e *Error) Error() string { return Say(e.Format, e.Names...) }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error wrapping err (may be nil) whose text is msg
// (said as is: a percent sign in it is kept) followed by hint, a format
// with one %s per name.
func Errorf(err error, msg, hint string, names ...Name) *Error {
	return &Error{Format: strings.ReplaceAll(msg, "%", "%%") + hint, Names: names, Err: err}
}

// Say returns format with its i-th %s replaced by names[i] as said now
// (Name.String): a hint inside a larger error text, made when the error
// is (format holds no other verb; %% is a percent sign).
func Say(format string, names ...Name) string {
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n.String()
	}
	return fmt.Sprintf(format, args...)
}
