package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// One flag says how every command prints its report: --format, with the
// formats that command supports (the first is the default). The --json
// flags that came before it stay as deprecated aliases of --format json,
// so scripts keep working (pflag warns on stderr and hides them from the
// help).

// formatValue is a --format flag: one of allowed ("md" is markdown).
type formatValue struct {
	format  *string
	allowed []string
}

func (v *formatValue) String() string { return *v.format }
func (v *formatValue) Type() string   { return strings.Join(v.allowed, "|") }

func (v *formatValue) Set(s string) error {
	if s == "md" {
		s = "markdown"
	}
	if !slices.Contains(v.allowed, s) {
		return fmt.Errorf("want %s", orList(v.allowed))
	}
	*v.format = s
	return nil
}

// addFormat registers --format (the default is allowed[0]) on fl and, if
// jsonOut is not nil, the deprecated --json alias of --format json;
// checkFormat sets *jsonOut to whether the format is json, so a command's
// code may read either.
func addFormat(fl *pflag.FlagSet, format *string, jsonOut *bool, allowed ...string) {
	*format = allowed[0]
	fl.Var(&formatValue{format: format, allowed: allowed}, "format", "output format: "+orList(allowed))
	if jsonOut != nil {
		fl.BoolVar(jsonOut, "json", false, "the same as --format json")
		fl.MarkDeprecated("json", "use --format json")
	}
}

// checkFormat resolves the deprecated --json against --format (a root
// PersistentPreRunE: it runs once the flags are parsed): --json alone is
// --format json; with another --format it is a usage error. Then --json's
// variable says whether the format is json.
func checkFormat(cmd *cobra.Command) error {
	fl := cmd.Flags()
	j, f := fl.Lookup("json"), fl.Lookup("format")
	if j == nil || f == nil {
		return nil
	}
	if j.Changed && j.Value.String() == "true" {
		if f.Changed && f.Value.String() != "json" {
			return usageError("--json is the old spelling of --format json: leave it out with --format %s", f.Value.String())
		}
		f.Value.Set("json")
	}
	// Through the Values: FlagSet.Set would repeat the deprecation notice.
	return j.Value.Set(strconv.FormatBool(f.Value.String() == "json"))
}

// orList writes "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
