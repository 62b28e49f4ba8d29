package httpclient

import "github.com/mcpbench/mcpbench/outcome"

// NetStats describes the connections of a client New built, over its
// whole life (outcome.NetStats: readers of results use it without
// compiling the client).
type NetStats = outcome.NetStats

// OAuthStats describes authorization over a client's life
// (outcome.OAuthStats).
type OAuthStats = outcome.OAuthStats
