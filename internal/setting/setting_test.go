package setting

import (
	"errors"
	"testing"
)

// A library error says its settings by their library names until a front
// end installs its words; an *Error (a sentinel made before SetNames)
// says them when read, and errors.As finds the names it carries.
func TestNamesSaidAsInstalled(t *testing.T) {
	base := errors.New("base")
	e := Errorf(base, "limit 5%", "; raise it with %s", MaxMessageBytes)
	if got, want := e.Error(), "limit 5%; raise it with driver.Config.MaxMessageBytes"; got != want {
		t.Fatalf("library: %q, want %q", got, want)
	}
	SetNames(func(n Name) string {
		if n == MaxMessageBytes {
			return "--max-message-bytes"
		}
		return ""
	})
	t.Cleanup(func() { SetNames(nil) })
	if got, want := e.Error(), "limit 5%; raise it with --max-message-bytes"; got != want {
		t.Fatalf("installed: %q, want %q", got, want)
	}
	if got := RequestTimeout.String(); got != string(RequestTimeout) {
		t.Errorf("a name without words: %q, want the library name", got)
	}
	if got, want := Say("give %s and %s", CertFile, MaxMessageBytes), "give httpclient.TLSFiles.CertFile and --max-message-bytes"; got != want {
		t.Errorf("Say: %q, want %q", got, want)
	}
	var se *Error
	if !errors.As(error(e), &se) || len(se.Names) != 1 || se.Names[0] != MaxMessageBytes || !errors.Is(e, base) {
		t.Errorf("errors.As/Is: %+v", se)
	}
}
