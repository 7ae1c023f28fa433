package store

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// threadUsage is what the kernel counted for the calling thread: its CPU
// time, the blocks it read from storage (page-cache misses) and the times
// it was switched out involuntarily; kernel is what the thread was doing
// in the kernel, sampled while the step ran past kernelSampleAfter.
type threadUsage struct {
	cpu       time.Duration
	inBlocks  int64
	preempted int64
	// kernel, when set, waits for the sampler and returns its samples:
	// called after the step has released the writer (the sampler may
	// wait for a CPU, and a step must not wait for it).
	kernel func() []string
}

// rusageThread is RUSAGE_THREAD (linux).
const rusageThread = 1

// kernelSampleAfter is how long a measured step runs before its thread's
// state is sampled (every kernelSampleEvery): only a step on its way to
// the 50-ms bound is looked at.
const (
	kernelSampleAfter = 25 * time.Millisecond
	kernelSampleEvery = 2 * time.Millisecond
	kernelSamplesMax  = 24
)

// lockThreadUsage pins the calling goroutine to its thread and returns
// the thread's usage so far and a function that returns the usage since
// and unpins. A maintenance step measured this way says whether a slow
// step computed, read the disk, or waited for a CPU (issue 19); past
// kernelSampleAfter, a goroutine samples what the thread does in the
// kernel (its state, system call and kernel stack: why a step that
// neither computes nor reads still takes its time).
func lockThreadUsage() func() threadUsage {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	before, ok := readThreadUsage()
	done := make(chan struct{})
	var samples []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		samples = sampleKernel(tid, done)
	}()
	kernel := func() []string {
		wg.Wait()
		return samples
	}
	return func() threadUsage {
		defer runtime.UnlockOSThread()
		after, ok2 := readThreadUsage()
		close(done)
		if !ok || !ok2 {
			return threadUsage{kernel: kernel}
		}
		return threadUsage{after.cpu - before.cpu, after.inBlocks - before.inBlocks, after.preempted - before.preempted, kernel}
	}
}

func readThreadUsage() (threadUsage, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return threadUsage{}, false
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return threadUsage{cpu: cpu, inBlocks: ru.Inblock, preempted: ru.Nivcsw}, true
}

// sampleKernel returns the distinct states of thread tid, each with the
// time since the sampling began plus kernelSampleAfter, until done.
func sampleKernel(tid int, done <-chan struct{}) []string {
	wait := time.NewTimer(kernelSampleAfter)
	defer wait.Stop()
	select {
	case <-done:
		return nil
	case <-wait.C:
	}
	t0 := time.Now()
	tick := time.NewTicker(kernelSampleEvery)
	defer tick.Stop()
	var out []string
	last := ""
	for {
		if s := kernelState(tid); s != last && len(out) < kernelSamplesMax {
			out = append(out, fmt.Sprintf("+%dms %s", (kernelSampleAfter+time.Since(t0)).Milliseconds(), s))
			last = s
		}
		select {
		case <-done:
			return out
		case <-tick.C:
		}
	}
}

// syscallNames are the system calls a step's thread makes.
var syscallNames = map[string]string{"0": "read", "1": "write", "17": "pread64", "18": "pwrite64", "74": "fsync", "75": "fdatasync",
	"202": "futex", "9": "mmap", "11": "munmap", "3": "close", "257": "openat", "8": "lseek", "72": "fcntl", "24": "sched_yield", "39": "getpid"}

// kernelState is one sample of thread tid: its scheduler state (R
// running or runnable, S sleeping, D in uninterruptible wait), its system
// call (or "user" when it runs its own code), and, in a system call, the
// top of its kernel stack (readable by root only).
func kernelState(tid int) string {
	dir := "/proc/self/task/" + strconv.Itoa(tid) + "/"
	state := "?"
	if b, err := os.ReadFile(dir + "stat"); err == nil {
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			state = string(b[i+2])
		}
	}
	call := "?"
	if b, err := os.ReadFile(dir + "syscall"); err == nil {
		f := strings.Fields(string(b))
		switch {
		case len(f) == 0:
		case f[0] == "running":
			call = "user"
		default:
			call = f[0]
			if n, ok := syscallNames[f[0]]; ok {
				call = n
			}
			if len(f) > 1 {
				if fd, err := strconv.ParseInt(strings.TrimPrefix(f[1], "0x"), 16, 64); err == nil {
					call += fmt.Sprintf("(fd %d)", fd)
				}
			}
		}
	}
	s := state + " " + call
	if call != "user" {
		if b, err := os.ReadFile(dir + "stack"); err == nil {
			var frames []string
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				f := strings.Fields(line)
				if len(f) < 2 {
					continue
				}
				name, _, _ := strings.Cut(f[1], "+")
				frames = append(frames, name)
				if len(frames) == 6 {
					break
				}
			}
			if len(frames) > 0 {
				s += " [" + strings.Join(frames, "<") + "]"
			}
		}
	}
	return s
}

// samples are the kernel samples of a measured thread (none when it was
// not measured).
func (u threadUsage) samples() []string {
	if u.kernel == nil {
		return nil
	}
	return u.kernel()
}
