package apicheck

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/kube"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// Every manifest k8s-job's golden test keeps strict-decodes into the
// typed k8s.io/api structs (a field the API lacks is an error) and prints
// back, with sigs.k8s.io/yaml, to the same bytes: package kube prints
// what k8s.io/api's types would.
func TestGoldenManifestsAreKubernetesObjects(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "cmd", "mcpbench", "testdata", "k8s-job", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("golden manifests %v, %v: want at least 3", files, err)
	}
	kinds := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var again [][]byte
		for _, doc := range strings.Split(string(data), "\n---\n") {
			if !strings.HasSuffix(doc, "\n") {
				doc += "\n"
			}
			var kind struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj any
			switch kind.Kind {
			case "Job":
				obj = &batchv1.Job{}
			case "ConfigMap":
				obj = &corev1.ConfigMap{}
			case "PersistentVolumeClaim":
				obj = &corev1.PersistentVolumeClaim{}
			default:
				t.Fatalf("%s: a document of kind %q", f, kind.Kind)
			}
			kinds[kind.Kind]++
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s: strict decode of the %s: %v", f, kind.Kind, err)
			}
			b, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			again = append(again, b)
		}
		if got := bytes.Join(again, []byte("---\n")); !bytes.Equal(got, data) {
			t.Errorf("%s printed back by k8s.io/api differs:\n%s", f, got)
		}
	}
	if kinds["Job"] != len(files) || kinds["ConfigMap"] == 0 || kinds["PersistentVolumeClaim"] == 0 {
		t.Errorf("documents %v: want a Job in each file, and a ConfigMap and a claim somewhere", kinds)
	}
	// The strict decoder does reject a field the API lacks.
	var j batchv1.Job
	if err := yaml.UnmarshalStrict([]byte("kind: Job\nspec:\n  completionMood: Indexed\n"), &j); err == nil {
		t.Error("an unknown field decoded without error: the test would not catch one")
	}
}

// Every field of package kube's types is a field of the k8s.io/api type
// it stands for, with the same JSON name, omitempty and kind of value
// (a quantity, a string in kube, is a resource.Quantity there).
func TestKubeTypesMatchTheAPI(t *testing.T) {
	for _, p := range []struct{ ours, api any }{
		{kube.Job{}, batchv1.Job{}},
		{kube.ConfigMap{}, corev1.ConfigMap{}},
		{kube.PersistentVolumeClaim{}, corev1.PersistentVolumeClaim{}},
	} {
		n := match(t, reflect.TypeOf(p.ours), reflect.TypeOf(p.api), reflect.TypeOf(p.ours).Name())
		if n < 5 {
			t.Errorf("%T: %d fields compared", p.ours, n)
		}
	}
}

type jsonField struct {
	typ       reflect.Type
	omitempty bool
}

// fields are a struct's JSON fields by name, those of embedded structs
// without a JSON name (",inline") included.
func fields(t reflect.Type) map[string]jsonField {
	m := map[string]jsonField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" {
			for k, v := range fields(f.Type) {
				m[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = jsonField{f.Type, strings.Contains(","+opts+",", ",omitempty,")}
	}
	return m
}

var quantity = reflect.TypeOf(resource.Quantity{})

// match compares ours with api field by field, recursively, and returns
// how many fields it compared.
func match(t *testing.T, ours, api reflect.Type, path string) int {
	t.Helper()
	if ours.Kind() != api.Kind() {
		if ours.Kind() == reflect.String && api == quantity {
			return 0
		}
		t.Errorf("%s: a %v here, a %v (%v) in k8s.io/api", path, ours.Kind(), api.Kind(), api)
		return 0
	}
	switch ours.Kind() {
	case reflect.Pointer, reflect.Slice:
		return match(t, ours.Elem(), api.Elem(), path+"[]")
	case reflect.Map:
		return match(t, ours.Key(), api.Key(), path+"{key}") + match(t, ours.Elem(), api.Elem(), path+"{}")
	case reflect.Struct:
		n := 0
		af := fields(api)
		for name, f := range fields(ours) {
			a, ok := af[name]
			if !ok {
				t.Errorf("%s.%s: k8s.io/api's %v has no such field", path, name, api)
				continue
			}
			if f.omitempty != a.omitempty {
				t.Errorf("%s.%s: omitempty %v here, %v in k8s.io/api", path, name, f.omitempty, a.omitempty)
			}
			n += 1 + match(t, f.typ, a.typ, path+"."+name)
		}
		return n
	}
	return 0
}
