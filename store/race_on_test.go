//go:build race

package store

// raceEnabled: the race detector slows SQLite tenfold or more, so tests
// that grow large histories grow smaller ones under it.
const raceEnabled = true
