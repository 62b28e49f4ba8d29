package verdict

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// specIgnored are run.json spec fields that two like-for-like runs may
// differ in: where the profile came from and its prose (Source,
// Description), the target's address (URL, URLs, SourceAddrs: compared
// as the target, where an embedded server's port changes from run to
// run), the seed, the redacted headers and the environment, how long the
// run lasted (Duration, Warmup, GracefulStop: more or fewer intervals,
// not another workload), and the fields LikeForLike already compares from
// the summaries (Name, VUs, MaxVUs, Rate, Model, Stages, Protocol).
var specIgnored = map[string]bool{
	"Source": true, "Description": true, "URL": true, "URLs": true, "SourceAddrs": true,
	"Seed": true, "Headers": true, "Env": true,
	"Duration": true, "Warmup": true, "GracefulStop": true,
	"Name": true, "VUs": true, "MaxVUs": true, "Rate": true, "Model": true, "Stages": true, "Protocol": true,
}

// specSecret matches spec paths whose values are not printed: a
// difference there is named, its values shown as "(differs)".
var specSecret = regexp.MustCompile(`(?i)secret|token|password|passwd|key|auth|cookie|header|env|proxy|tls`)

// maxSpecMismatches caps the spec differences listed one by one; the
// rest are counted in one more Mismatch.
const maxSpecMismatches = 6

// SpecLikeForLike lists where two runs' resolved profiles (run.json's
// spec: the profile with its flags applied, e.g. each op's method, tool
// and arguments, the mix weights, concurrency, think time, chaos, churn,
// thresholds) differ, leaving out the fields specIgnored names. Each
// Mismatch's Field is "spec " and the field's path as run.json spells it
// (e.g. "spec Ops[0].Arguments.ms"); values print as JSON, and a path
// that may hold a secret prints "(differs)" instead. At most
// maxSpecMismatches are listed, then one "spec (more)" Mismatch counts
// the rest. nil when either spec is nil (a run.json that is missing or
// older than spec) or when they agree. a and b are decoded JSON values
// or anything json.Marshal accepts; an unencodable spec compares as
// unknown (nil).
func SpecLikeForLike(a, b any) []Mismatch {
	if a == nil || b == nil {
		return nil
	}
	ga, okA := generic(a)
	gb, okB := generic(b)
	if !okA || !okB {
		return nil
	}
	var out []Mismatch
	n := 0
	add := func(path string, x, y any) {
		n++
		if n > maxSpecMismatches {
			return
		}
		xs, ys := leaf(x), leaf(y)
		if specSecret.MatchString(path) {
			xs, ys = "(differs)", "(differs)"
		}
		out = append(out, Mismatch{Field: "spec " + path, A: xs, B: ys})
	}
	diffSpec("", ga, gb, true, add)
	if n > maxSpecMismatches {
		out = append(out, Mismatch{Field: "spec (more)", A: fmt.Sprintf("%d more field(s) differ", n-maxSpecMismatches), B: "see run.json"})
	}
	return out
}

// generic turns v into the values encoding/json decodes to (maps,
// slices, float64, string, bool, nil).
func generic(v any) (any, bool) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var g any
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, false
	}
	return g, true
}

// diffSpec calls add for each leaf path where a and b differ; top: the
// spec's own fields, where specIgnored applies.
func diffSpec(path string, a, b any, top bool, add func(path string, a, b any)) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			add(path, a, b)
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			if !(top && specIgnored[k]) {
				sorted = append(sorted, k)
			}
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := k
			if path != "" {
				p = path + "." + k
			}
			diffSpec(p, x[k], y[k], false, add)
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			add(path, a, b)
			return
		}
		for i := range min(len(x), len(y)) {
			diffSpec(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], false, add)
		}
		if len(x) != len(y) {
			add(path+" (entries)", float64(len(x)), float64(len(y)))
		}
	default:
		if !equalLeaf(a, b) {
			add(path, a, b)
		}
	}
}

// equalLeaf compares two decoded JSON leaves (or a leaf and a map or
// slice, which differ).
func equalLeaf(a, b any) bool {
	switch b.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

// leaf prints a decoded JSON value compactly ("absent" for a missing
// field), at most 60 characters.
func leaf(v any) string {
	if v == nil {
		return "absent"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "…"
	}
	return strings.TrimSpace(s)
}
