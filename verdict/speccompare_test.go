package verdict

import (
	"reflect"
	"testing"
)

// The resolved profiles differ in an op's argument, a mix weight, an op
// more and an OAuth secret: each is named (the secret without its
// values); the seed, target and length are not.
func TestSpecLikeForLike(t *testing.T) {
	spec := func(ms float64, weight int, secret, url string, seed int, extra bool) map[string]any {
		ops := []any{
			map[string]any{"Tool": "slow", "Arguments": map[string]any{"ms": ms}, "Weight": weight},
			map[string]any{"Tool": "echo", "Weight": 1},
		}
		if extra {
			ops = append(ops, map[string]any{"Tool": "echo", "Weight": 1})
		}
		return map[string]any{"URL": url, "Seed": seed, "Duration": "10s", "Ops": ops,
			"OAuth": map[string]any{"ClientSecret": secret}}
	}
	a := spec(20, 1, "s3cret", "http://127.0.0.1:1/mcp", 1, false)
	b := spec(2, 3, "other", "http://127.0.0.1:2/mcp", 2, true)
	got := SpecLikeForLike(a, b)
	want := []Mismatch{
		{"spec OAuth.ClientSecret", "(differs)", "(differs)"},
		{"spec Ops[0].Arguments.ms", "20", "2"},
		{"spec Ops[0].Weight", "1", "3"},
		{"spec Ops (entries)", "2", "3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	// Clean: another seed, target and duration only.
	c := spec(20, 1, "s3cret", "http://127.0.0.1:9/mcp", 7, false)
	c["Duration"] = "1m"
	if got := SpecLikeForLike(a, c); got != nil {
		t.Fatalf("alike specs differ: %v", got)
	}
	// A run.json without a spec says nothing.
	if got := SpecLikeForLike(a, nil); got != nil {
		t.Fatalf("nil spec: %v", got)
	}
}

// More than maxSpecMismatches differences: the first are listed, the
// rest counted.
func TestSpecLikeForLikeCaps(t *testing.T) {
	a, b := map[string]any{}, map[string]any{}
	for i, k := range []string{"A", "B", "C", "D", "E", "F", "G", "H"} {
		a[k], b[k] = i, i+1
	}
	got := SpecLikeForLike(a, b)
	if len(got) != maxSpecMismatches+1 || got[maxSpecMismatches] != (Mismatch{"spec (more)", "2 more field(s) differ", "see run.json"}) {
		t.Fatalf("%v", got)
	}
}
