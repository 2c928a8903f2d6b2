//go:build race

package indexentity

// raceDetector is set when the tests run with -race, which makes them
// several times slower: the heaviest cases then run fewer rounds.
const raceDetector = true
