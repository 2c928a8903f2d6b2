//go:build !race

package large

const raceEnabled = false
