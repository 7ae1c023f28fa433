package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

// QueueTotals counts unfinished jobs and webhook deliveries of every team
// (partial indexes keep this cheap whatever the job history).
func (db *DB) QueueTotals(ctx context.Context, now time.Time) (*app.QueueTotals, error) {
	return scan.QueueTotals(db.read.QueryRowContext(ctx, scan.QueueTotalsQuery), now)
}

// CheckWritable proves that dir accepts new files: it creates, writes,
// syncs and removes a probe file. A read-only mount, a full disk or wrong
// permissions fail it, as they would fail the next document.
func CheckWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".ready-*")
	if err != nil {
		return fmt.Errorf("data directory not writable: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	_, err = f.Write([]byte("ok\n"))
	err = errors.Join(err, f.Sync(), f.Close())
	if err != nil {
		return fmt.Errorf("data directory not writable: %w", err)
	}
	return os.Remove(filepath.Clean(name))
}

// CheckFreeSpace fails when the file system holding dir has less than min
// bytes available to the server's user.
func CheckFreeSpace(dir string, min uint64) error {
	free, err := FreeSpace(dir)
	if errors.Is(err, errNoStatfs) {
		return nil // not measurable on this platform
	} else if err != nil {
		return err
	}
	if free < min {
		return fmt.Errorf("%d MB free, %d MB required (--min-free-mb)", free>>20, min>>20)
	}
	return nil
}

var errNoStatfs = errors.New("free space is not measurable on this platform")
