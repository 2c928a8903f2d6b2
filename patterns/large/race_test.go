//go:build race

package large

// raceEnabled: the race detector slows compression some 25 times, so the
// tests compress smaller values under it.
const raceEnabled = true
