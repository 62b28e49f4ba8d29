//go:build race

package httpclient

// raceBuild: built with -race (see newRawIO).
const raceBuild = true
