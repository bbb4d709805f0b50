//go:build !race

package objects

const raceEnabled = false
