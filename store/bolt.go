package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"folio/app"
)

// Bucket names in the bbolt file.
var (
	bucketQueue     = []byte("queue")      // priority(1) + seq(8) -> queueItem
	bucketWebhooks  = []byte("webhooks")   // delivery schedule (webhooks issue)
	bucketRateLimit = []byte("rate_limit") // the API's rate-limit windows
	bucketAuthLimit = []byte("auth_limit") // login and account throttles (per email, IP, user)
)

// Bolt is the bbolt database: the durable job queue, webhook schedule and
// rate-limit state. The server holds it open exclusively.
type Bolt struct {
	db  *bolt.DB
	seq atomic.Uint64
	q   *queue
}

// OpenBolt opens (creating when needed) the bbolt file with its buckets.
func OpenBolt(path string) (*Bolt, error) {
	if err := privateFile(path, false); err != nil { // bbolt sets the mode only of a file it creates
		return nil, err
	}
	db, err := bolt.Open(path, privateFileMode, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open %s (is another folio serving this data directory?): %w", path, err)
	}
	b := &Bolt{db: db, q: newQueue()}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketQueue, bucketWebhooks, bucketRateLimit, bucketAuthLimit} {
			bk, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			if bytes.Equal(name, bucketQueue) {
				// Continue the sequence after the highest stored key so
				// restarts keep FIFO order within a priority.
				if k, _ := bk.Cursor().Last(); len(k) == 9 {
					b.seq.Store(binary.BigEndian.Uint64(k[1:]))
				}
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	if s := uint64(time.Now().UnixNano()); s > b.seq.Load() {
		b.seq.Store(s)
	}
	if err := b.loadQueue(); err != nil {
		db.Close()
		return nil, err
	}
	go b.commitQueue(ackFlush)
	return b, nil
}

// Close writes the queue's pending acknowledgements and closes the file.
func (b *Bolt) Close() error {
	b.stopQueue()
	return b.db.Close()
}

// Ping checks that the file answers.
func (b *Bolt) Ping() error {
	return b.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketQueue) == nil {
			return errors.New("bbolt: the queue bucket is missing")
		}
		return nil
	})
}

// Backup writes a consistent copy of the file to path. It copies inside a
// read transaction, which writes do not wait for (bbolt makes a writer wait
// for readers only when it has to grow the file's memory map, and the file
// takes milliseconds to copy).
func (b *Bolt) Backup(path string) error {
	return b.db.View(func(tx *bolt.Tx) error { return tx.CopyFile(path, privateFileMode) })
}

// removeIfExists deletes a file, ignoring a missing one.
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

var _ app.RateStore = (*Bolt)(nil)

// SaveRateWindows writes and deletes API rate-limit counters.
func (b *Bolt) SaveRateWindows(put map[string]app.WindowState, del []string) error {
	return b.saveWindows(bucketRateLimit, put, del)
}

// LoadRateWindows reads the stored API rate-limit counters.
func (b *Bolt) LoadRateWindows() (map[string]app.WindowState, error) {
	return b.loadWindows(bucketRateLimit)
}

// AuthLimits stores the login and account throttles' counters, apart from
// the API's.
func (b *Bolt) AuthLimits() app.RateStore { return authLimits{b} }

type authLimits struct{ b *Bolt }

func (a authLimits) SaveRateWindows(put map[string]app.WindowState, del []string) error {
	return a.b.saveWindows(bucketAuthLimit, put, del)
}

func (a authLimits) LoadRateWindows() (map[string]app.WindowState, error) {
	return a.b.loadWindows(bucketAuthLimit)
}

// saveWindows puts and deletes keys of a limits bucket in one transaction,
// and opens none when there is nothing to write.
func (b *Bolt) saveWindows(bucket []byte, put map[string]app.WindowState, del []string) error {
	if len(put) == 0 && len(del) == 0 {
		return nil
	}
	return b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucket)
		for _, k := range del {
			if err := bk.Delete([]byte(k)); err != nil {
				return err
			}
		}
		for k, w := range put {
			v, _ := json.Marshal(w)
			if err := bk.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b *Bolt) loadWindows(bucket []byte) (map[string]app.WindowState, error) {
	m := map[string]app.WindowState{}
	err := b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			var w app.WindowState
			if err := json.Unmarshal(v, &w); err != nil {
				return err
			}
			m[string(k)] = w
			return nil
		})
	})
	return m, err
}
