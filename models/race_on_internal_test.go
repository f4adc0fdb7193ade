//go:build race

package models

// raceEnabled: the race detector drops a quarter of sync.Pool's Puts.
const raceEnabled = true
