//go:build !linux

package store

import "time"

type threadUsage struct {
	cpu       time.Duration
	inBlocks  int64
	preempted int64
	kernel    func() []string
}

// lockThreadUsage measures nothing outside Linux.
func lockThreadUsage() func() threadUsage {
	return func() threadUsage { return threadUsage{} }
}

func (u threadUsage) samples() []string { return nil }
