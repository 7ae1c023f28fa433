package main

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"folio/app"
)

// slowWrites holds every document write for two minutes.
type slowWrites struct{ app.FileStore }

func (w slowWrites) WriteFile(name string, write func(io.Writer) error) (int64, error) {
	time.Sleep(2 * time.Minute)
	return w.FileStore.WriteFile(name, write)
}

// waitLog waits until the child's log holds s.
func (p *proc) waitLog(t *testing.T, s string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(p.log); strings.Contains(string(b), s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never logged %q", s)
		}
	}
}

// TestSecondSignalForcesExit: SIGINT starts the graceful drain, which
// waits for the running job (its write takes two minutes; the grace is
// longer). A second SIGINT ends the process within two seconds with exit
// status 130, after returning the running job to pending: it is not
// counted as a crash, and the next start completes it.
func TestSecondSignalForcesExit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	p := startProcEnv(t, []string{"FOLIO_TEST_CRASH=hold-writes"}, data, addr, "run1.log", "--workers", "1", "--shutdown-grace", "5m")
	c := procClient(t, data, addr)
	u := c.signup("Impatient")
	key := c.createKey(u.token, nil)
	tpl := c.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	id := c.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "Held Ltd")).str("jobId")
	waitUntil(t, scaled(30*time.Second), "the job is running", func() bool {
		return c.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil).str("status") == "processing"
	})

	exited := make(chan struct{})
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(exited) }()
	p.waitLog(t, `msg="shutting down" signal=interrupt`, scaled(10*time.Second))
	// The drain waits for the job.
	select {
	case <-exited:
		t.Fatalf("the first signal ended the process at once (%v); the drain should wait for the running job", p.cmd.ProcessState)
	case <-time.After(500 * time.Millisecond):
	}

	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-exited:
	case <-time.After(scaled(2 * time.Second)):
		t.Fatal("the second signal did not end the process within 2 s")
	}
	t.Logf("exited %v after the second signal", time.Since(start))
	if code := p.cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGINT) {
		t.Fatalf("exit status %d (%v), want %d", code, p.cmd.ProcessState, 128+int(syscall.SIGINT))
	}
	p.waitLog(t, `msg="forced exit: a second signal during the drain" signal=interrupt`, time.Second)
	p.waitLog(t, `msg="forced exit: running jobs released to pending" count=1`, time.Second)
	var status string
	var crashes, attempts int
	if err := openSQL(t, data).QueryRow(`SELECT status, crashes, attempts FROM jobs WHERE id = ?`, id).Scan(&status, &crashes, &attempts); err != nil {
		t.Fatal(err)
	}
	if status != "pending" || crashes != 0 || attempts != 1 {
		t.Fatalf("after the forced exit the job is %s with %d crashes, %d attempts; want pending, 0, 1", status, crashes, attempts)
	}

	// The next start runs it again, to its end, with no crash counted.
	startProc(t, data, addr, "run2.log")
	if j := c.waitEnd(key, id); j.str("status") != "completed" {
		t.Fatalf("after the restart: %s", j.raw)
	}
	if err := openSQL(t, data).QueryRow(`SELECT crashes, attempts FROM jobs WHERE id = ?`, id).Scan(&crashes, &attempts); err != nil || crashes != 0 || attempts != 2 {
		t.Fatalf("crashes %d, attempts %d (%v); want 0, 2", crashes, attempts, err)
	}
}
