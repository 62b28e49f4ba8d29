package jsonrpc

import "testing"

// BenchmarkParse scans one progress notification.
func BenchmarkParse(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3,"total":10,"message":"working"}}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Parse(msg)
		if err != nil || m.Kind != KindNotification {
			b.Fatal(err)
		}
		FieldNumber(m.Params, "progress")
	}
}

// BenchmarkParseToolsCall scans a typical tools/call response (text
// content, structured content, isError) and looks up isError, as the
// session does for every tools/call.
func BenchmarkParseToolsCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1234,"result":{"content":[{"type":"text","text":"Weather in Berlin: 18.5 \u00b0C, partly cloudy.\nWind 12 km/h from the west; humidity 64%. Forecast for tomorrow: light rain in the afternoon."}],"structuredContent":{"city":"Berlin","temperature":18.5,"unit":"celsius","conditions":["partly cloudy","windy"],"wind":{"speed":12,"direction":"W"},"humidity":0.64,"alerts":null},"isError":false}}`)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := Parse(msg)
		if err != nil || m.Kind != KindResponse {
			b.Fatal(err)
		}
		Field(m.Result, "isError")
	}
}
