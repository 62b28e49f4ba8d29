package driver

import (
	"bytes"
	"strconv"
)

// appendRequest renders {"jsonrpc":"2.0","id":ID,"method":M,"params":P} where
// P is params with "_meta" merged in when meta is non-empty (meta is the
// inside of the _meta object, without braces).
func appendRequest(dst []byte, id int64, method string, params []byte, meta []byte) []byte {
	return appendRequestExtra(dst, id, method, params, nil, meta)
}

// appendRequestExtra is appendRequest with extra top-level params fields
// (without braces; e.g. the inputResponses of a multi round-trip retry).
func appendRequestExtra(dst []byte, id int64, method string, params, extra, meta []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	dst = append(dst, '"')
	if len(extra) > 0 {
		p := bytes.TrimSpace(params)
		if len(p) < 2 {
			p = []byte("{}")
		}
		merged := make([]byte, 0, len(p)+len(extra)+1)
		merged = append(merged, p[:len(p)-1]...)
		if !isEmptyObject(p) {
			merged = append(merged, ',')
		}
		merged = append(merged, extra...)
		merged = append(merged, '}')
		params = merged
	}
	return appendParams(dst, params, meta)
}

// appendNotification renders a notification without an id.
func appendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"`...)
	dst = append(dst, method...)
	dst = append(dst, '"')
	return appendParams(dst, params, nil)
}

func appendParams(dst, params, meta []byte) []byte {
	if len(params) == 0 && len(meta) == 0 {
		return append(dst, '}')
	}
	dst = append(dst, `,"params":`...)
	if len(meta) == 0 {
		dst = append(dst, params...)
		return append(dst, '}')
	}
	p := bytes.TrimSpace(params)
	if len(p) < 2 {
		p = []byte("{}")
	}
	dst = append(dst, p[:len(p)-1]...) // without the closing brace
	if !isEmptyObject(p) {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":{`...)
	dst = append(dst, meta...)
	return append(dst, "}}}"...)
}

func isEmptyObject(p []byte) bool {
	return len(bytes.TrimSpace(p[1:len(p)-1])) == 0
}

// appendResponse renders a response to a server→client request.
func appendResponse(dst []byte, id []byte, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendErrorResponse renders an error response to a server→client request.
func appendErrorResponse(dst []byte, id []byte, code int, msg string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, "}}"...)
}
