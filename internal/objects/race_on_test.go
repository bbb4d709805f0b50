//go:build race

package objects

// raceEnabled: the race detector drops pooled buffers at random, so tests
// of what a call allocates do not hold.
const raceEnabled = true
