package driver

import (
	"bytes"
	"fmt"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// Pagination (2025-11-25 utilities §Pagination): a list result with a
// nextCursor has more pages; the client asks for the next one with
// params.cursor set to it, until a result without a nextCursor. A list op
// (tools/list, resources/list, resources/templates/list, prompts/list)
// follows every cursor: its latency runs from the first page's request to
// the last page's response (what an agent that needs the whole list waits
// for), its time to first byte is the first page's, and Result.Pages
// counts the pages. Each page is a request with its own id and stream,
// judged by the op's ledger like the others.

// DefaultMaxPages bounds the pages one list op follows when Op.MaxPages
// is 0: a server whose cursors never end fails the op instead of holding
// it forever.
const DefaultMaxPages = 100

// isListMethod reports the methods whose results paginate.
func isListMethod(method string) bool {
	switch method {
	case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
		return true
	}
	return false
}

// takeCursor keeps the nextCursor of a list result for the next page
// (the read buffer is reused, so it is copied).
func (s *Lane) takeCursor(c *call, result []byte) {
	cur := jsonrpc.Field(result, "nextCursor")
	if len(cur) == 0 || string(cur) == "null" {
		return
	}
	c.more = true
	s.cursor = append(s.cursor[:0], cur...)
}

// nextPage counts the page just received in res.Pages and returns the
// params fields (without braces) that ask for the next one; ok is false,
// with res failed, when its cursor is not a string, repeats the previous
// one, or the op already fetched MaxPages pages.
func (s *Lane) nextPage(op *Op, res *Result) (extra []byte, ok bool) {
	res.Pages++
	x, err := s.pageParams(op, res)
	if err != nil {
		res.fail(err)
		return nil, false
	}
	return x, true
}

func (s *Lane) pageParams(op *Op, res *Result) ([]byte, error) {
	if res.Pages == 1 {
		s.prevCursor = s.prevCursor[:0]
	}
	if s.cursor[0] != '"' {
		return nil, fmt.Errorf("%w: nextCursor %s is not a string", ErrBadResponse, quoteShort(s.cursor))
	}
	if bytes.Equal(s.cursor, s.prevCursor) {
		return nil, fmt.Errorf("%w: nextCursor %s repeats the previous page's (a cursor loop)", ErrBadResponse, quoteShort(s.cursor))
	}
	limit := op.MaxPages
	if limit <= 0 {
		limit = DefaultMaxPages
	}
	if res.Pages >= limit {
		return nil, fmt.Errorf("%w: still a nextCursor after %d pages (max_pages)", ErrBadResponse, res.Pages)
	}
	s.prevCursor = append(s.prevCursor[:0], s.cursor...)
	s.pageBuf = append(append(s.pageBuf[:0], `"cursor":`...), s.cursor...)
	return s.pageBuf, nil
}
