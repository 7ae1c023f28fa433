//go:build !race

package main

// raceEnabled is set in the race detector's build, which runs the server
// (SQLite above all) many times slower.
const raceEnabled = false
