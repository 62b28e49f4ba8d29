package driver

import "testing"

func TestEncodeHeaderValue(t *testing.T) {
	// The examples of Streamable HTTP §Value Encoding.
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
	} {
		if got := encodeHeaderValue(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
