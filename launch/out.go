package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/results"
)

// A command's results directory (run, sweep, soak, their --processes
// forms, merge) is claimed before anything runs, and never overwritten:
//
//   - --out naming a missing directory creates it; an empty one is used;
//     a non-empty one is refused (exit 2) unless --overwrite, which
//     removes mcpbench's files there first — only when the directory is
//     one mcpbench wrote (ownResults: its run.json, or a sweep's
//     sweep.json, says "tool": "mcpbench") and holds nothing else: any
//     other file or directory there is named and refused (exit 2, nothing
//     removed), so a mistyped --out cannot wipe another directory;
//   - without --out, results/<time>-<profile> is created with os.Mkdir,
//     which fails when the directory exists: a second run started in the
//     same second gets …-2 (then -3 …), never the first one's directory;
//   - a whole run that never started (no session could be initialized:
//     the server is down) leaves no results directory: what it wrote is
//     removed, and the directory too when the command created it. A
//     segment (--segment, a child of --processes) keeps its results: the
//     merge reads them, and its summary says no operation ran.

// ownFiles are the files mcpbench writes at the top of a results
// directory (a run's, a merge's, a soak's, a sweep's; report.html is
// mcpbench plot's). --overwrite removes these and nothing else.
var ownFiles = map[string]bool{
	results.FileRun: true, results.FileSummary: true, results.FileIntervals: true, results.FileHistogram: true,
	results.FileOffenders: true, results.FileCheckpoint: true, results.FileSummaryHistograms: true, results.FileSoak: true,
	"sweep.json": true, "sweep.csv": true, "report.html": true,
}

// ownSubdir matches the directories mcpbench writes in a results
// directory, each a results directory of its own: a --processes child's
// segment-I, a sweep's step-NN (step-NN-rK with --repeat).
var ownSubdir = regexp.MustCompile(`^(segment-[0-9]+|step-[0-9]+(-r[0-9]+)?)$`)

// ownTemp matches the temporary file of an atomic write cut short
// (results.WriteJSON: ".<name>.<random>").
var ownTemp = regexp.MustCompile(`^\.([a-z.]+)\.[0-9a-z]+$`)

// ownResults checks that dir is a results directory mcpbench wrote: its
// run.json (or sweep.json) names mcpbench as its tool, or it holds only
// results directories mcpbench wrote (a --processes parent stopped
// before it merged); and that it holds nothing mcpbench does not write.
// foreign names what it holds that is not mcpbench's (each entry's path
// below dir; empty when none); marked is false when no marker was found.
func ownResults(dir string) (marked bool, foreign []string) {
	marked = toolIsMCPBench(filepath.Join(dir, results.FileRun)) || toolIsMCPBench(filepath.Join(dir, "sweep.json"))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, []string{dir + " (" + err.Error() + ")"}
	}
	subs := 0
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.Type().IsRegular() && (ownFiles[name] || ownTempOf(name)):
		case e.IsDir() && name == "plots":
			foreign = append(foreign, ownCharts(filepath.Join(dir, name), name)...)
		case e.IsDir() && ownSubdir.MatchString(name):
			subMarked, subForeign := ownResults(filepath.Join(dir, name))
			if !subMarked && len(subForeign) == 0 {
				subForeign = []string{"(no run.json of mcpbench)"}
			}
			for _, f := range subForeign {
				foreign = append(foreign, name+"/"+f)
			}
			subs++
		default:
			if e.IsDir() {
				name += "/"
			}
			foreign = append(foreign, name)
		}
	}
	if !marked && subs > 0 && len(foreign) == 0 {
		marked = true // only results directories mcpbench wrote, each checked
	}
	return marked, foreign
}

// ownTempOf reports whether name is an atomic write's temporary file of
// one of ownFiles.
func ownTempOf(name string) bool {
	m := ownTemp.FindStringSubmatch(name)
	return m != nil && ownFiles[m[1]]
}

// ownCharts names what the plots directory (mcpbench plot's: *.png,
// *.svg) holds that is not a chart.
func ownCharts(dir, rel string) (foreign []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{rel + "/ (" + err.Error() + ")"}
	}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.Type().IsRegular() || (ext != ".png" && ext != ".svg") {
			foreign = append(foreign, rel+"/"+e.Name())
		}
	}
	return foreign
}

// toolIsMCPBench reports whether the JSON file at path (run.json,
// sweep.json) says mcpbench wrote it: its "tool" is "mcpbench" (run.json)
// or "mcpbench <version>" (sweep.json).
func toolIsMCPBench(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var v struct {
		Tool string `json:"tool"`
	}
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	return v.Tool == "mcpbench" || strings.HasPrefix(v.Tool, "mcpbench ")
}

// outDir is a command's claim on its results directory.
type outDir struct {
	path    string
	created bool // this command made it (so it may remove it whole)
}

// ClaimOut claims dir, given by --out (or merge's -o), before the command
// runs: see the rules above. Its errors are usage errors naming flag.
func ClaimOut(flag, dir string, overwrite bool) (*outDir, error) {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return nil, Usagef("%s: %v", flag, err)
	}
	switch err := os.Mkdir(dir, 0o755); {
	case err == nil:
		return &outDir{path: dir, created: true}, nil
	case !errors.Is(err, fs.ErrExist):
		return nil, Usagef("%s: %v", flag, err)
	}
	entries, err := CheckOut(flag, dir, overwrite)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return nil, WithExitCode(ExitFailed, fmt.Errorf("%s: empty %s: %w", setting.Overwrite, dir, err))
		}
	}
	return &outDir{path: dir}, nil
}

// CheckOut checks, writing nothing, that dir may be claimed by ClaimOut:
// missing, empty, or (overwrite) a results directory; it returns dir's
// entries (those --overwrite removes).
func CheckOut(flag, dir string, overwrite bool) ([]os.DirEntry, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, Usagef("%s: %v", flag, err)
	}
	if !st.IsDir() {
		return nil, Usagef("%s %s exists and is not a directory; use another %s", flag, dir, flag)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, Usagef("%s: %v", flag, err)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if !overwrite {
		return nil, Usagef("%s %s exists and is not empty (%s); use %s to replace it, or another %s", flag, dir, listEntries(entries), setting.Overwrite, flag)
	}
	marked, foreign := ownResults(dir)
	if !marked {
		return nil, Usagef("%s %s holds files that are not mcpbench results (%s): %s replaces only a directory mcpbench wrote (its run.json or sweep.json says \"tool\": \"mcpbench\"); use another %s",
			flag, dir, listEntries(entries), setting.Overwrite, flag)
	}
	if len(foreign) > 0 {
		return nil, Usagef("%s %s holds files mcpbench does not write (%s): %s removes only mcpbench's results and would leave them mixed with new ones; move them away, or use another %s",
			flag, dir, listNames(foreign), setting.Overwrite, flag)
	}
	return entries, nil
}

// Within reports whether path is dir or inside it.
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// claimDefaultOut claims results/<time>-<name> (time: now, to the second)
// under root, or …-2, …-3 when a run started in the same second has it.
func claimDefaultOut(root string, now time.Time, name string) (*outDir, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, Usagef("results directory: %v", err)
	}
	base := filepath.Join(root, now.Format("20060102-150405")+"-"+name)
	for i := 1; i <= 1000; i++ {
		dir := base
		if i > 1 {
			dir += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return &outDir{path: dir, created: true}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, Usagef("results directory: %v", err)
		}
	}
	return nil, Usagef("results directory: %s and 999 more exist; give %s", base, setting.Out)
}

// listEntries names a directory's first entries, for an error.
func listEntries(entries []os.DirEntry) string {
	var names []string
	for i, e := range entries {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(entries)-3))
			break
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// listNames names the first of names, for an error.
func listNames(names []string) string {
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// abandon removes what a run that never started wrote: the directory
// when this command created it, else its contents (it was empty when
// claimed).
func (o *outDir) abandon() error {
	if o.created {
		return os.RemoveAll(o.path)
	}
	entries, err := os.ReadDir(o.path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(o.path, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// dropIfEmpty removes the directory when this command created it and
// nothing was written there (the command stopped before its run).
func (o *outDir) dropIfEmpty() {
	if o.created {
		os.Remove(o.path) // fails, as it should, when not empty
	}
}

// startMark is a sink that notes whether a run's clock started (Start:
// its sessions were set up); a run that could not start calls End alone.
type startMark struct{ started *atomic.Bool }

func (m startMark) Start(*results.RunInfo)           { m.started.Store(true) }
func (m startMark) Interval(*results.IntervalRecord) {}
func (m startMark) End(*results.RunEnd)              {}

var _ results.Sink = startMark{}

// abandonRun ends a command whose run never started (exit 1): its
// results directory is removed (see outDir.abandon); why names the
// cause.
func (e *env) abandonRun(why error) error {
	if e.out != nil {
		if err := e.out.abandon(); err != nil {
			fmt.Fprintf(e.stderr, "mcpbench: removing the results of a run that never started: %v\n", err)
		} else {
			fmt.Fprintf(e.stderr, "mcpbench: the run never started: no results written to %s\n", e.out.path)
		}
	}
	return WithExitCode(ExitFailed, why)
}

// OutDir is a claimed results directory (ClaimOut).
type OutDir = outDir

// Path is the directory.
func (o *outDir) Path() string { return o.path }

// DropIfEmpty removes the directory when its claim created it and
// nothing was written there.
func (o *outDir) DropIfEmpty() { o.dropIfEmpty() }
