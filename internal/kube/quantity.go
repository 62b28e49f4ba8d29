package kube

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// quantityRE is the syntax of a Kubernetes resource quantity
// (k8s.io/apimachinery/pkg/api/resource, "Quantity"): a decimal number
// with an optional binary-SI suffix Ki…Ei, decimal-SI suffix n…E, or
// decimal exponent; without a sign, since a request or a claim size is
// never negative.
var quantityRE = regexp.MustCompile(`^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$`)

var (
	binarySuffixes  = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	decimalSuffixes = map[string]int{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
	decimalNames    = map[int]string{-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
)

// Quantity checks that s is a resource quantity ("2", "500m", "1Gi",
// "1.5e3") and returns it in the canonical form Kubernetes prints
// (resource.Quantity's String: "1024Mi" is "1Gi", "0.5" is "500m",
// "1.5Gi" is "1536Mi"; below a nano it rounds up), or says what is wrong.
// The apicheck module checks it against resource.ParseQuantity.
func Quantity(s string) (string, error) {
	m := quantityRE.FindStringSubmatch(s)
	if m == nil || len(s) > 64 {
		return "", fmt.Errorf("not a quantity: want a number with an optional unit, e.g. 500m, 2, 1Gi, 512Mi")
	}
	num, suffix := m[1], m[2]
	whole, frac, _ := strings.Cut(num, ".")
	mant, ok := new(big.Int).SetString(cmpOr(whole+frac, "0"), 10)
	if !ok {
		return "", fmt.Errorf("not a quantity: %q", s)
	}
	exp := -len(frac)
	binary, exponent := false, false
	shift := 0 // binary: the power of 2 of the suffix
	switch {
	case len(suffix) == 2 && suffix[1] == 'i':
		binary = true
		for i, b := range binarySuffixes {
			if b == suffix {
				shift = 10 * i
			}
		}
		mant.Lsh(mant, uint(shift))
	case len(suffix) >= 2 && (suffix[0] == 'e' || suffix[0] == 'E'):
		exponent = true
		n, err := strconv.Atoi(suffix[1:])
		if err != nil || n > 1000 || n < -1000 {
			return "", fmt.Errorf("not a quantity: exponent out of range")
		}
		exp += n
	default:
		exp += decimalSuffixes[suffix]
	}
	// Above 1E (10^18) no request or claim makes sense, and Kubernetes'
	// own printing of such amounts is lossy: refused.
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(18-min(exp, 18))), nil)
	if exp > 18 && mant.Sign() != 0 || mant.Cmp(limit) > 0 && exp >= 0 || exp < 0 && mant.Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(18-exp)), nil)) > 0 {
		return "", fmt.Errorf("not a quantity: more than 1E (10^18)")
	}
	// Kubernetes prints a quantity as it was written when its parser's
	// fast path finds it canonical already (resource.ParseQuantity).
	if echo(whole, frac, binary, shift, exp+len(frac)) {
		return s, nil
	}
	ten := big.NewInt(10)
	if mant.Sign() == 0 {
		return "0", nil
	}
	// Round up to a nano (the smallest amount Kubernetes keeps).
	if exp < -9 {
		d := new(big.Int).Exp(ten, big.NewInt(int64(-9-exp)), nil)
		q, r := new(big.Int).QuoRem(mant, d, new(big.Int))
		if r.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		mant, exp = q, -9
	}
	for new(big.Int).Rem(mant, ten).Sign() == 0 { // 1.50 is 15 × 10^-1
		mant.Quo(mant, ten)
		exp++
	}
	// Binary form: an integer amount of at least 1024, in the largest
	// unit that divides it; otherwise the decimal form.
	if binary && exp >= 0 {
		v := new(big.Int).Mul(mant, new(big.Int).Exp(ten, big.NewInt(int64(exp)), nil))
		if v.Cmp(big.NewInt(1024)) >= 0 {
			k := 0
			unit := big.NewInt(1024)
			for k < len(binarySuffixes)-1 && new(big.Int).Rem(v, unit).Sign() == 0 {
				v.Quo(v, unit)
				k++
			}
			return v.String() + binarySuffixes[k], nil
		}
	}
	// Decimal form: mantissa × 10^x, x a multiple of 3, the largest that
	// keeps the mantissa whole.
	x := exp - ((exp%3)+3)%3
	if !exponent && x > 18 {
		x = 18
	}
	mant.Mul(mant, new(big.Int).Exp(ten, big.NewInt(int64(exp-x)), nil))
	if exponent {
		if x == 0 {
			return mant.String(), nil
		}
		return mant.String() + "e" + strconv.Itoa(x), nil
	}
	return mant.String() + decimalNames[x], nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// echo reports whether resource.ParseQuantity keeps s's own text as its
// String: its fast path (an int64 mantissa) finds it canonical — a
// binary-SI amount whose number is not a multiple of 8, or a decimal one
// whose scale is a multiple of 3, whose digits do not end in 000 and do
// not start with 0. num and denom are the digits before and after the
// point; exponent the suffix's power (of 2 for binary, of 10 otherwise).
func echo(num, denom string, binary bool, shift, exponent int) bool {
	if num = strings.TrimLeft(num, "0"); num == "" { // the parser strips leading zeros
		num = "0"
	}
	if binary {
		if denom != "" || 15-len(num)-int(float32(shift)*3/10)-1 < 0 {
			return false
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil || v > (1<<62)>>shift {
			return false
		}
		return v&0x07 != 0
	}
	if 18-(len(num)+len(denom)) < 0 {
		return false
	}
	scale := exponent - len(denom)
	shifted := num + denom
	if scale < -9 || shifted == "" {
		return false
	}
	return scale%3 == 0 && !strings.HasSuffix(shifted, "000") && shifted[0] != '0'
}
