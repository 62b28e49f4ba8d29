package profile

import (
	"errors"
	"fmt"
	"testing"
)

// SaidWith and NamedWith say every SettingError in an error's tree — one
// wrapped with %w and one inside errors.Join — with the front end's words,
// and leave an error that names no setting as it is.
func TestSettingErrorsSaidWith(t *testing.T) {
	a := SettingErrorf([]string{"segment"}, "{segment}: want I/N")
	b := SettingErrorf([]string{"protocol"}, "{protocol}: unknown version")
	err := fmt.Errorf("profile x: %w", errors.Join(a, fmt.Errorf("and: %w", b)))
	flag := func(s string) string { return map[string]string{"segment": "--segment", "protocol": "--protocol"}[s] }
	if got := len(SettingErrors(err, nil)); got != 2 {
		t.Fatalf("SettingErrors found %d, want 2", got)
	}
	said := SaidWith(err, flag)
	want := "profile x: --segment: want I/N\nand: --protocol: unknown version"
	if said != want {
		t.Errorf("SaidWith = %q, want %q", said, want)
	}
	named := NamedWith(err, flag)
	if named.Error() != want {
		t.Errorf("NamedWith(...).Error() = %q, want %q", named.Error(), want)
	}
	var se *SettingError
	if !errors.As(named, &se) || se != a {
		t.Errorf("errors.As through NamedWith: %v", se)
	}
	plain := errors.New("no setting here")
	if NamedWith(plain, flag) != plain || SaidWith(plain, flag) != "no setting here" {
		t.Error("an error naming no setting changed")
	}
}
