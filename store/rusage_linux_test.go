package store

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A measured thread that waits in the kernel past kernelSampleAfter is
// sampled: its state, its system call and (for root) its kernel stack.
func TestLockThreadUsageSamplesKernelWaits(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	go func() {
		time.Sleep(kernelSampleAfter + 40*time.Millisecond)
		w.Write([]byte{1})
	}()
	stop := lockThreadUsage()
	var b [1]byte
	// A raw read: the goroutine's thread itself waits in the kernel.
	if _, err := syscall.Read(int(r.Fd()), b[:]); err != nil {
		t.Fatal(err)
	}
	u := stop()
	if len(u.samples()) == 0 {
		t.Fatal("no kernel sample of a thread blocked for 65 ms")
	}
	if !strings.Contains(u.samples()[0], "S read(fd ") {
		t.Errorf("first sample = %q, want the thread sleeping in read", u.samples()[0])
	}
	t.Logf("samples: %q", u.samples())

	// A short step is not sampled.
	stop = lockThreadUsage()
	if u := stop(); len(u.samples()) != 0 {
		t.Errorf("a step of no time sampled: %q", u.samples())
	}
}
