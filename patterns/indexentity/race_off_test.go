//go:build !race

package indexentity

// raceDetector is set when the tests run with -race.
const raceDetector = false
