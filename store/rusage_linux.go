package store

import (
	"runtime"
	"syscall"
	"time"
)

// threadUsage is what the kernel counted for the calling thread: its CPU
// time, the blocks it read from storage (page-cache misses) and the times
// it was switched out involuntarily.
type threadUsage struct {
	cpu       time.Duration
	inBlocks  int64
	preempted int64
}

// rusageThread is RUSAGE_THREAD (linux).
const rusageThread = 1

// lockThreadUsage pins the calling goroutine to its thread and returns
// the thread's usage so far and a function that returns the usage since
// and unpins. A maintenance step measured this way says whether a slow
// step computed, read the disk, or waited for a CPU (issue 19).
func lockThreadUsage() func() threadUsage {
	runtime.LockOSThread()
	before, ok := readThreadUsage()
	return func() threadUsage {
		defer runtime.UnlockOSThread()
		after, ok2 := readThreadUsage()
		if !ok || !ok2 {
			return threadUsage{}
		}
		return threadUsage{after.cpu - before.cpu, after.inBlocks - before.inBlocks, after.preempted - before.preempted}
	}
}

func readThreadUsage() (threadUsage, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return threadUsage{}, false
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return threadUsage{cpu, ru.Inblock, ru.Nivcsw}, true
}
