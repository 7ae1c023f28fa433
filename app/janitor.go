package app

import (
	"context"
	"log/slog"
	"time"
)

// Sweeper is one janitor task: retention of files and records, purging of
// deleted accounts.
type Sweeper func(ctx context.Context) error

// RunJanitor runs every sweeper at start and then every interval until ctx
// ends. A failing sweeper is logged and tried again next time.
func RunJanitor(ctx context.Context, logger *slog.Logger, every time.Duration, sweepers ...Sweeper) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for _, sw := range sweepers {
			if err := sw(ctx); err != nil && ctx.Err() == nil {
				logger.Error("janitor", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
