//go:build !unix

package client

import "time"

// cpuTime is not measured where getrusage is missing (Windows): the bench
// reports CPU per document as 0 there.
func cpuTime() time.Duration { return 0 }
