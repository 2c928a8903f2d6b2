package onetomany

import "time"

// SetBackoff replaces the pause between tries for a test, and returns the
// function that puts the default back.
func SetBackoff(f func(n int) time.Duration) (restore func()) {
	old := backoff
	backoff = f
	return func() { backoff = old }
}
