//go:build !unix

package interleave

import "time"

// cpuTime is unavailable here: CPU figures read 0.
func cpuTime() time.Duration { return 0 }
