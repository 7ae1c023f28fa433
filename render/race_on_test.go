//go:build race

package render

// raceEnabled is set in the race detector's build, which evaluates
// expressions and lays out pages many times slower.
const raceEnabled = true
