package apicheck

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/kube"
	"k8s.io/apimachinery/pkg/api/resource"
)

// kube.Quantity accepts what resource.ParseQuantity accepts (without a
// sign) and prints it as resource.Quantity's String does: mcpbench's
// manifest printer needs no apimachinery, and this keeps it honest.
func TestQuantityMatchesResource(t *testing.T) {
	inputs := []string{
		"0", "1", "2", "0.5", ".5", "5.", "1500m", "500m", "0.001", "0.0001", "1n", "0.1n", "1u", "100u",
		"1k", "1000", "1024", "1536", "1Ki", "1.5Ki", "1024Mi", "1.5Gi", "0.5Gi", "1023", "1023Ki", "2Gi",
		"300M", "1G", "1000M", "1T", "1P", "1E", "1000E", "1e3", "1.5e3", "1E3", "1e-3", "1e0", "12e6",
		"+1", "+1Gi", "007", "1.000", "1Ei", "3.25Mi", "100Mi", "128974848", "129e6", "129M", "123Mi",
		// not quantities
		"", "lots", "1GB", "1 Gi", "Gi", "1.2.3", "-1", "1e", "1Kb", "0x10", "1ki", "e3",
	}
	r := rand.New(rand.NewPCG(1, 2))
	suffixes := []string{"", "m", "k", "M", "G", "Ki", "Mi", "Gi", "n", "u", "e3", "e-2", "T", "Ti"}
	for range 2000 {
		n := fmt.Sprintf("%d", r.IntN(5000))
		if r.IntN(3) == 0 {
			n += fmt.Sprintf(".%d", r.IntN(1000))
		}
		inputs = append(inputs, n+suffixes[r.IntN(len(suffixes))])
	}
	for _, in := range inputs {
		got, err := kube.Quantity(in)
		q, kerr := resource.ParseQuantity(in)
		switch {
		case kerr != nil && err == nil:
			t.Errorf("%q: kube.Quantity accepts it (%q), resource.ParseQuantity refuses: %v", in, got, kerr)
		case kerr == nil && err != nil && q.Sign() >= 0 && strings.ContainsRune("+.0123456789", rune(in[0])) && q.Cmp(resource.MustParse("1E")) <= 0:
			// kube.Quantity may refuse what has no number ("Gi", "e3" read 0) or
			// exceeds 1E; nothing else.
			t.Errorf("%q: kube.Quantity refuses it (%v), resource.ParseQuantity reads %s", in, err, q.String())
		case kerr == nil && err == nil && got != q.String():
			t.Errorf("%q: kube.Quantity prints %q, resource.Quantity %q", in, got, q.String())
		}
	}
}
