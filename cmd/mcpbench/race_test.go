//go:build race

package main

// raceEnabled is true under -race (the slow README test runs in the plain pass).
const raceEnabled = true
