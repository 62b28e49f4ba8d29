package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/profiles"
	"github.com/spf13/cobra"
)

func newProfilesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "profiles [NAME]",
		Short: "List the built-in profiles, or print one (its YAML)",
		Long: `profiles lists the built-in workload profiles, each with the first sentence of
its description; profiles NAME prints that profile's YAML, a starting point
for a profile of your own (run --profile FILE).`,
		Example: `  mcpbench profiles
  mcpbench profiles streaming > my-workload.yaml
  mcpbench run --profile my-workload.yaml`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return profiles.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				data, err := profiles.Read(args[0])
				if errors.Is(err, fs.ErrNotExist) {
					return usageError("profiles: no built-in profile %q (built-ins: %s)", args[0], strings.Join(profiles.Names(), ", "))
				}
				if err != nil {
					return withCode(exitFailed, err)
				}
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, name := range profiles.Names() {
				p, err := profile.LoadProfile(name)
				if err != nil {
					return withCode(exitFailed, fmt.Errorf("built-in profile %s: %w", name, err))
				}
				fmt.Fprintf(tw, "%s\t%s\n", name, firstSentence(p.Description))
			}
			return tw.Flush()
		},
	}
}

// firstSentence is s's first sentence on one line: up to the first ". "
// (or all of s), spaces collapsed, cut at a word with "…" past
// maxDescription characters.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > maxDescription {
		s = string(r[:maxDescription])
		if i := strings.LastIndexByte(s, ' '); i > 0 {
			s = s[:i]
		}
		s = strings.TrimRight(s, ",;:") + " …"
	}
	return s
}

// maxDescription bounds a profile's line in the list (characters).
const maxDescription = 120
