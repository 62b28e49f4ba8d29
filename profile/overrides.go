package profile

import (
	"fmt"
	"reflect"
	"strings"
)

// Layers: a profile's fields come from the profile file, then from
// overrides given outside it (the command's flags), then from defaults.
// Override applies the second layer, the one place where a flag wins over
// the file; Compile applies the defaults once, after every layer.

// Override is a value given for one profile field outside the profile
// file (a command-line flag). Field is the field's YAML path, dot
// separated ("vus", "timeouts.request", "oauth.client_id"). Value points
// to the value: of the field's type, of a type with the same underlying
// type and kind (a *time.Duration for a Duration field, a *int64 for a
// units.Size), or of the element type of a pointer field (a *float64 for
// a *float64 field: the field gets its own copy).
type Override struct {
	Field string
	Value any
}

// Override applies ovs to p in order, each replacing the field's value
// (the profile file < the flags). Sections a path passes through that the
// profile left out (oauth, chaos, sweep) are created. When vus is
// overridden and max_vus is not, a max_vus the profile set below the new
// vus is raised to it (the profile's cap was for its own VUs). Defaults
// are not applied (Compile does). A path that names no field, or a value
// of the wrong type, is an error naming the field: a mistake of the
// caller, not of the profile. Not safe for concurrent use with other uses
// of p.
func (p *Profile) Override(ovs ...Override) error {
	given := map[string]bool{}
	for _, ov := range ovs {
		if err := setField(reflect.ValueOf(p).Elem(), ov); err != nil {
			return err
		}
		given[ov.Field] = true
	}
	if given["vus"] && !given["max_vus"] && p.MaxVUs != 0 && p.MaxVUs < p.VUs {
		p.MaxVUs = p.VUs
	}
	return nil
}

// setField sets the field of struct v at ov's path to ov's value.
func setField(v reflect.Value, ov Override) error {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("override %s: %s", ov.Field, fmt.Sprintf(why, args...))
	}
	parts := strings.Split(ov.Field, ".")
	for i, name := range parts {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem())) // a section the profile left out
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return bad("%s is not a section", strings.Join(parts[:i], "."))
		}
		f, ok := fieldByTag(v, name)
		if !ok {
			return bad("no field %q", name)
		}
		v = f
	}
	src := reflect.ValueOf(ov.Value)
	if src.Kind() != reflect.Pointer || src.IsNil() {
		return bad("want a pointer to the value, got %T", ov.Value)
	}
	src = src.Elem()
	dst := v
	if dst.Kind() == reflect.Pointer && src.Kind() != reflect.Pointer {
		n := reflect.New(dst.Type().Elem())
		dst.Set(n)
		dst = n.Elem()
	}
	switch {
	case src.Type().AssignableTo(dst.Type()):
		dst.Set(src)
	case src.Kind() == dst.Kind() && src.Type().ConvertibleTo(dst.Type()):
		dst.Set(src.Convert(dst.Type()))
	default:
		return bad("a %s cannot set a %s", src.Type(), dst.Type())
	}
	return nil
}

// fieldByTag returns the field of struct v whose YAML name is name.
func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag == name && tag != "-" {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
