package client

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Process is a folio server run as a child process, for load from another
// process than the server's.
type Process struct {
	Bin, Data, Addr string
	Cmd             *exec.Cmd
}

// StartProcess runs `bin serve` on a free loopback port with data as the data
// directory and extra flags, and waits until it accepts connections.
func StartProcess(bin, data string, log *os.File, extra ...string) (*Process, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	args := append([]string{"serve", "--addr", addr, "--data", data}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Bin: bin, Data: data, Addr: addr, Cmd: cmd}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			return nil, fmt.Errorf("server did not start (see its log)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Admin runs `bin admin args...` against the process's data directory.
func (p *Process) Admin(args ...string) error {
	out, err := exec.Command(p.Bin, append(append([]string{"admin"}, args...), "--data", p.Data)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("folio admin %v: %v: %s", args, err, out)
	}
	return nil
}

// Client returns an API client trusting the process's certificate.
func (p *Process) Client() (*Client, error) {
	ca, err := os.ReadFile(filepath.Join(p.Data, "tls", "cert.pem"))
	if err != nil {
		return nil, err
	}
	return New("https://"+p.Addr, "", ca)
}

// Stop ends the process with SIGTERM and waits.
func (p *Process) Stop() error {
	p.Cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		p.Cmd.Process.Kill()
		return <-done
	}
}
