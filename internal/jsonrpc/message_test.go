package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// parsed is a comparable copy of a Message (raw values compacted), or of
// the rejection.
type parsed struct {
	OK     bool
	Kind   Kind
	ID     string
	Method string
	Params string
	Result string
	Error  string
	HasID  bool // ID non-nil
	HasRes bool // Result non-nil
	HasErr bool // Error non-nil
}

func compact(t testing.TB, raw []byte) string {
	if raw == nil {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatalf("compact %q: %v", raw, err)
	}
	return buf.String()
}

func gotParsed(t testing.TB, b []byte) parsed {
	m, err := Parse(b)
	if err != nil {
		if m.Kind != KindInvalid || m.ID != nil || m.Method != nil || m.Params != nil || m.Result != nil || m.Error != nil {
			t.Fatalf("Parse(%q) failed (%v) but returned %+v", b, err, m)
		}
		return parsed{}
	}
	return parsed{OK: true, Kind: m.Kind, ID: compact(t, m.ID), Method: string(m.Method),
		Params: compact(t, m.Params), Result: compact(t, m.Result), Error: compact(t, m.Error),
		HasID: m.ID != nil, HasRes: m.Result != nil, HasErr: m.Error != nil}
}

// refParsed is the oracle: encoding/json's validity (json.Valid, with its
// nesting limit of 10000, the same as MaxJSONDepth), the message decoded
// into a map with exact key names (a struct would match keys
// case-insensitively), then the JSON-RPC rules of Parse.
func refParsed(t testing.TB, b []byte) parsed {
	if !json.Valid(b) {
		return parsed{}
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return parsed{}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("json.Valid accepted %q but Unmarshal failed: %v", b, err)
	}
	var p parsed
	if id, ok := m["id"]; ok {
		switch c := id[0]; {
		case c == 'n':
		case c == '"' || c == '-' || c >= '0' && c <= '9':
			p.ID, p.HasID = compact(t, id), true
		default:
			return parsed{}
		}
	}
	method, hasMethod := m["method"]
	if hasMethod {
		if method[0] != '"' {
			return parsed{}
		}
		if err := json.Unmarshal(method, &p.Method); err != nil {
			t.Fatalf("method %q: %v", method, err)
		}
	}
	params, hasParams := m["params"]
	result, hasRes := m["result"]
	errObj, hasErr := m["error"]
	if hasParams {
		p.Params = compact(t, params)
	}
	if hasRes {
		p.Result, p.HasRes = compact(t, result), true
	}
	if hasErr {
		p.Error, p.HasErr = compact(t, errObj), true
	}
	switch {
	case hasMethod && p.HasID:
		p.Kind = KindRequest
	case hasMethod:
		p.Kind = KindNotification
	case hasRes || hasErr:
		p.Kind = KindResponse
	default:
		return parsed{}
	}
	p.OK = true
	return p
}

func nest(open, close string, n int, inner string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

var parseCases = []struct {
	name string
	in   string
	want parsed
}{
	// The user-reported defects: malformed JSON must not count as a response.
	{"bad array in result", `{"jsonrpc":"2.0","id":1,"result":{"content":[}]}`, parsed{}},
	{"nonsense result", `{"jsonrpc":"2.0","id":1,"result":nonsense}`, parsed{}},
	{"key without value in error", `{"jsonrpc":"2.0","id":1,"error":{""}}`, parsed{}},

	// Valid MCP messages.
	{"tools/call response", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi \"there\"\n"}],"isError":false}}`,
		parsed{OK: true, Kind: KindResponse, ID: "7", Result: `{"content":[{"type":"text","text":"hi \"there\"\n"}],"isError":false}`, HasID: true, HasRes: true}},
	{"error response", "{\"jsonrpc\": \"2.0\",\n \"id\": \"a-1\", \"error\": {\"code\": -32601, \"message\": \"Method not found\"}}",
		parsed{OK: true, Kind: KindResponse, ID: `"a-1"`, Error: `{"code":-32601,"message":"Method not found"}`, HasID: true, HasErr: true}},
	{"progress notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":0.5e1,"total":10,"message":"working"}}`,
		parsed{OK: true, Kind: KindNotification, Method: "notifications/progress", Params: `{"progressToken":7,"progress":0.5e1,"total":10,"message":"working"}`}},
	{"server request", ` {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":-1}} `,
		parsed{OK: true, Kind: KindRequest, ID: "0", Method: "sampling/createMessage", Params: `{"messages":[],"maxTokens":-1}`, HasID: true}},
	{"null result, null id", `{"id":null,"result":null}`, parsed{OK: true, Kind: KindResponse, Result: "null", HasRes: true}},
	{"id null is absent: notification", `{"id":null,"method":"ping"}`, parsed{OK: true, Kind: KindNotification, Method: "ping"}},
	{"empty containers", `{"id":-0,"result":{"a":[],"b":{},"c":[[],{}]}}`,
		parsed{OK: true, Kind: KindResponse, ID: "-0", Result: `{"a":[],"b":{},"c":[[],{}]}`, HasID: true, HasRes: true}},
	{"numbers", `{"id":1,"result":[0,-1,1.5,1e5,1E+5,1e-5,-0.0e0,123456789012345678901234567890]}`,
		parsed{OK: true, Kind: KindResponse, ID: "1", Result: `[0,-1,1.5,1e5,1E+5,1e-5,-0.0e0,123456789012345678901234567890]`, HasID: true, HasRes: true}},
	{"escapes", `{"id":"\u00e9\"\\\/\b\f\n\r\t","result":"\ud83d\ude00"}`,
		parsed{OK: true, Kind: KindResponse, ID: `"\u00e9\"\\\/\b\f\n\r\t"`, Result: `"\ud83d\ude00"`, HasID: true, HasRes: true}},
	{"method unescaped", `{"method":"tools\/call","id":2}`, parsed{OK: true, Kind: KindRequest, ID: "2", Method: "tools/call", HasID: true}},
	{"escaped key", `{"\u0069d":3,"m\u0065thod":"x"}`, parsed{OK: true, Kind: KindRequest, ID: "3", Method: "x", HasID: true}},
	{"keys are exact", `{"ID":3,"Method":"x","Result":1}`, parsed{}},
	{"duplicate id: last wins", `{"id":1,"id":2,"result":0}`, parsed{OK: true, Kind: KindResponse, ID: "2", Result: "0", HasID: true, HasRes: true}},
	{"duplicate id: null last", `{"id":1,"method":"m","id":null}`, parsed{OK: true, Kind: KindNotification, Method: "m"}},
	{"duplicate method: string last", `{"method":1,"method":"m"}`, parsed{OK: true, Kind: KindNotification, Method: "m"}},
	{"invalid UTF-8 method", "{\"method\":\"a\xffb\"}", parsed{OK: true, Kind: KindNotification, Method: "a\uFFFDb"}},
	{"UTF-8 method", `{"method":"héllo"}`, parsed{OK: true, Kind: KindNotification, Method: "héllo"}},
	{"invalid UTF-8 in a string is JSON", "{\"result\":\"\xc3\"}", parsed{OK: true, Kind: KindResponse, Result: "\"\xc3\"", HasRes: true}},

	// JSON-RPC rules.
	{"id object", `{"id":{},"result":1}`, parsed{}},
	{"id array", `{"id":[1],"result":1}`, parsed{}},
	{"id true", `{"id":true,"result":1}`, parsed{}},
	{"method number", `{"method":1}`, parsed{}},
	{"method null", `{"method":null,"id":1}`, parsed{}},
	{"no kind", `{"jsonrpc":"2.0","id":1}`, parsed{}},
	{"empty object", `{}`, parsed{}},
	{"array", `[{"id":1,"result":1}]`, parsed{}},
	{"string", `"x"`, parsed{}},

	// Malformed JSON, nested included.
	{"trailing data", `{"id":1,"result":1}x`, parsed{}},
	{"two objects", `{"id":1,"result":1}{}`, parsed{}},
	{"trailing comma", `{"id":1,"result":1,}`, parsed{}},
	{"trailing comma nested", `{"id":1,"result":[1,]}`, parsed{}},
	{"leading comma", `{,"id":1,"result":1}`, parsed{}},
	{"double comma", `{"id":1,,"result":1}`, parsed{}},
	{"missing comma", `{"id":1 "result":1}`, parsed{}},
	{"missing colon", `{"id" 1,"result":1}`, parsed{}},
	{"unquoted key nested", `{"id":1,"result":{a:1}}`, parsed{}},
	{"bracket mismatch", `{"id":1,"result":[1}}`, parsed{}},
	{"brace mismatch", `{"id":1,"result":{"a":1]}`, parsed{}},
	{"unclosed", `{"id":1,"result":[1`, parsed{}},
	{"unclosed string", `{"id":1,"result":"abc}`, parsed{}},
	{"control char in string", "{\"id\":1,\"result\":\"a\tb\"}", parsed{}},
	{"bad escape", `{"id":1,"result":"\x"}`, parsed{}},
	{"short unicode escape", `{"id":1,"result":"\u12"}`, parsed{}},
	{"bad hex", `{"id":1,"result":"\u12g4"}`, parsed{}},
	{"leading zero", `{"id":01,"result":1}`, parsed{}},
	{"plus sign", `{"id":+1,"result":1}`, parsed{}},
	{"bare minus", `{"id":-,"result":1}`, parsed{}},
	{"dot without digits", `{"id":1.,"result":1}`, parsed{}},
	{"leading dot", `{"id":1,"result":.5}`, parsed{}},
	{"exponent without digits", `{"id":1,"result":1e}`, parsed{}},
	{"hex number", `{"id":0x10,"result":1}`, parsed{}},
	{"NaN", `{"id":1,"result":NaN}`, parsed{}},
	{"bad literal", `{"id":1,"result":tru}`, parsed{}},
	{"literal with tail", `{"id":1,"result":nullx}`, parsed{}},
	{"capital literal", `{"id":1,"result":True}`, parsed{}},
	{"single quotes", `{'id':1,"result":1}`, parsed{}},
	{"BOM", "\uFEFF{\"id\":1,\"result\":1}", parsed{}},
	{"NUL after", "{\"id\":1,\"result\":1}\x00", parsed{}},
	{"vertical tab is not whitespace", "{\"id\":1,\v\"result\":1}", parsed{}},
	{"empty", ``, parsed{}},
	{"spaces", `   `, parsed{}},

	// Nesting: encoding/json allows 10000 levels, the message object being
	// level 1; so does Parse.
	{"depth 10000", `{"id":1,"result":` + nest("[", "]", MaxJSONDepth-1, "") + `}`,
		parsed{OK: true, Kind: KindResponse, ID: "1", Result: nest("[", "]", MaxJSONDepth-1, ""), HasID: true, HasRes: true}},
	{"depth 10001", `{"id":1,"result":` + nest("[", "]", MaxJSONDepth, "") + `}`, parsed{}},
	{"depth 10001 objects", `{"id":1,"result":` + nest(`{"a":`, "}", MaxJSONDepth, "1") + `}`, parsed{}},
	{"deep and unbalanced", `{"id":1,"result":` + nest("[", "]", 300, "") + "]}", parsed{}},
	{"deep mixed", `{"id":1,"result":` + nest(`[{"a":`, "}]", 2000, "0") + `}`,
		parsed{OK: true, Kind: KindResponse, ID: "1", Result: nest(`[{"a":`, "}]", 2000, "0"), HasID: true, HasRes: true}},
	{"deep mismatch beyond 256", `{"id":1,"result":` + nest(`[{"a":`, "}]", 200, "0") + `]}`, parsed{}},
}

func TestParseMessage(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, gotParsed(t, []byte(c.in))); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.want, refParsed(t, []byte(c.in))); diff != "" {
				t.Errorf("encoding/json disagrees with the table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMessageRawSlices(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0", "id" : 12 ,"result" :{"a":[1, 2]}, "error":null}`)
	m, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{string(m.ID), string(m.Result), string(m.Error)}
	if diff := cmp.Diff([]string{"12", `{"a":[1, 2]}`, "null"}, got); diff != "" {
		t.Fatalf("raw slices (-want +got):\n%s", diff)
	}
	// Slices alias the input.
	if &m.Result[0] != &in[bytes.Index(in, []byte(`{"a"`))] {
		t.Fatal("Result does not alias the input")
	}
}

func TestParseMessageNoAllocs(t *testing.T) {
	msgs := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3,"total":10}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\u00e9 caf\u00e9"}],"isError":false}}`),
		[]byte(`{"id":1,"result":` + nest("[", "]", 250, "") + `}`),
	}
	for _, b := range msgs {
		if n := testing.AllocsPerRun(100, func() {
			if _, err := Parse(b); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("Parse(%.40q...) allocates %.0f times", b, n)
		}
	}
}

func TestField(t *testing.T) {
	obj := []byte(`{"progressToken":"t","progress":2.5,"nested":{"progress":9},"list":[1,{"total":3}],"total":10, "isError" : true}`)
	for _, c := range []struct {
		key, want string
	}{
		{"progressToken", `"t"`}, {"progress", "2.5"}, {"nested", `{"progress":9}`}, {"total", "10"},
		{"isError", "true"}, {"missing", ""},
	} {
		if got := string(Field(obj, c.key)); got != c.want {
			t.Errorf("Field(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	if v, ok := FieldNumber(obj, "progress"); !ok || v != 2.5 {
		t.Errorf("FieldNumber(progress) = %v %v", v, ok)
	}
	if _, ok := FieldNumber(obj, "progressToken"); ok {
		t.Error("FieldNumber of a string must fail")
	}
	dup := []byte(`{"isError":false,"is\u0045rror":true}`)
	if got := string(Field(dup, "isError")); got != "true" {
		t.Errorf("Field with an escaped duplicate key = %q, want true (the last, as encoding/json)", got)
	}
	if Field([]byte(`[1]`), "a") != nil || Field([]byte(`{"a" 1}`), "a") != nil || Field([]byte(`{"a":1,}`), "a") != nil {
		t.Error("Field on a non-object or malformed object must return nil")
	}
}

// FuzzParse checks Parse against encoding/json: the same
// messages accepted, with the same kind, id, method (decoded), params,
// result and error.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		if len(c.in) < 4096 {
			f.Add([]byte(c.in))
		}
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}],"nextCursor":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"a":[true,false,null]}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"}}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}}`,
		`{"m\u0065thod":"\u0074ools/list","\u0069d":1e2}`,
		"{\"method\":\"\xed\xa0\x80\"}",
		`{"id":1,"result":"\uD800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := refParsed(t, b)
		got := gotParsed(t, b)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Parse(%q) differs from encoding/json (-want +got):\n%s", b, diff)
		}
		if want.OK {
			// Field agrees with the map for every plain top-level key.
			var m map[string]json.RawMessage
			json.Unmarshal(b, &m)
			for k, v := range m {
				if strings.ContainsRune(k, utf8.RuneError) {
					continue // a key with invalid UTF-8 is compared raw
				}
				if fv := Field(b, k); compact(t, fv) != compact(t, v) {
					t.Fatalf("Field(%q, %q) = %q, want %q", b, k, fv, v)
				}
			}
		}
	})
}
