// Command mcpgo-server is a tiny MCP server built on github.com/mark3labs/mcp-go
// (Streamable HTTP), a second implementation besides the reference server
// (the official Go SDK) to run mcpbench against: two tools (whoami, the
// first listed, takes no arguments; echo) and two resources. It lives in a
// module of its own so that mcp-go is no dependency of mcpbench.
//
//	cd scripts/mcpgo-server && go run . -addr 127.0.0.1:8090
//	mcpbench run --url http://127.0.0.1:8090/mcp -p ../../examples/correlate/profile.yaml
package main

import (
	"context"
	"flag"
	"log"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address (the endpoint is /mcp)")
	flag.Parse()
	s := server.NewMCPServer("mcpgo-server", "0.1", server.WithToolCapabilities(false), server.WithResourceCapabilities(false, false))
	var calls atomic.Int64
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Returns the server's name and the number of calls so far.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return mcp.NewToolResultText("mcpgo-server"), nil
		})
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns text."), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	for _, r := range []struct{ uri, text string }{{"mem://first", "first resource"}, {"mem://second", "second resource"}} {
		s.AddResource(mcp.NewResource(r.uri, r.uri, mcp.WithMIMEType("text/plain")),
			func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.uri, MIMEType: "text/plain", Text: r.text}}, nil
			})
	}
	log.Printf("mcpgo-server: http://%s/mcp", *addr)
	if err := server.NewStreamableHTTPServer(s, server.WithEndpointPath("/mcp")).Start(*addr); err != nil {
		log.Fatal(err)
	}
}
