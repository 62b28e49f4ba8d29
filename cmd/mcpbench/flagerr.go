package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/internal/units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flag errors that say what to do: a mistyped flag name gets the closest
// flag of the command, a duration without its unit gets the unit.

// flagError is the root's flag error function (cobra hands it down to
// every subcommand): an unknown flag suggests the command's nearest flag
// names, a duration flag given a bare number suggests the unit. Every
// flag error is a usage error (exit 2).
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		if near := nearFlags(cmd, ne.GetSpecifiedName()); len(near) > 0 {
			err = fmt.Errorf("%w; did you mean %s?", err, strings.Join(near, " or "))
		}
		return withCode(exitUsage, err)
	}
	var ve *pflag.InvalidValueError
	if errors.As(err, &ve) && ve.GetFlag().Value.Type() == "duration" {
		if hint, ok := units.UnitHint(ve.GetValue()); ok {
			err = fmt.Errorf("--%s %s: %s", ve.GetFlag().Name, ve.GetValue(), hint)
		}
	}
	return withCode(exitUsage, err)
}

// nearFlags returns the visible flags of cmd (its own and inherited)
// closest to the mistyped name, as --name: within an edit distance of 2
// (a third of the name's length for long names), or having name as a
// prefix; at most three, closest first.
func nearFlags(cmd *cobra.Command, name string) []string {
	limit := max(2, len(name)/3)
	best := limit + 1
	var near []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		d := editDistance(name, f.Name)
		if d > limit && strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = limit
		}
		switch {
		case d < best:
			best, near = d, []string{"--" + f.Name}
		case d == best && len(near) < 3:
			near = append(near, "--"+f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return near
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (flag names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
