package refserver_test

import (
	"context"
	"fmt"

	"github.com/mcpbench/mcpbench/refserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func ExampleStart() {
	ctx := context.Background()
	srv, err := refserver.Start(ctx, "", refserver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL()}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"key": "k"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(srv.Stats().Executions["k"])
	// Output:
	// 1 executions
	// 1
}
