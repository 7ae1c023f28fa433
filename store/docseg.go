package store

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Documents kept by the database (job_files, up to InlineMax) have their
// bytes in append-only segment files beside it, docs/seg-NNNNNNNN.dat, and
// their row says where (docs/decisions.md, "Documents in segment files"):
// SQLite wrote every byte of a document twice, to the WAL and again when
// the checkpoint copied it, which cost a synchronous generate more CPU
// than the rest of its row. A document is written once, by the request's
// own goroutine, before the transaction that records it; the row, in that
// transaction, names its segment, offset, length and CRC-32C.
//
//   - kill -9 between the write and the commit leaves bytes no row names:
//     space, reclaimed with the segment.
//   - The segments written since are synced before each checkpoint syncs
//     the WAL. An OS crash can still write a row before its bytes (the
//     kernel writes pages back in no set order); the CRC finds it, and the
//     document reads as gone (ECodeFileGone) rather than damaged.
//   - A segment no row names any more (retention, deleted jobs) is removed
//     by collectSegments, unless it is the one appended to or an append to
//     it is not yet committed.
type docSegments struct {
	dir string

	writeMu sync.Mutex // held while writing to a segment

	mu       sync.Mutex
	active   int64              // segment appended to (0: none yet)
	size     int64              // its size: the next offset
	files    map[int64]*os.File // open segments
	inflight map[int64]int      // appends not yet committed or given up, by segment
	unsynced map[int64]bool     // segments written since the last sync
	dirty    atomic.Bool        // unsynced is not empty
	closed   bool               // after close, appends fail
}

// segmentMax is the size past which appends go to a new segment: small
// enough that retention empties whole segments soon, large enough that
// there are few files.
var segmentMax int64 = 64 << 20

// docRef says where a document's bytes are.
type docRef struct {
	seg, off, n int64
	crc         uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errDocDamaged: a segment does not hold the bytes its row names.
var errDocDamaged = errors.New("store: a document's bytes do not match its checksum")

func newDocSegments(dir string) *docSegments {
	s := &docSegments{dir: dir, files: map[int64]*os.File{}, inflight: map[int64]int{}, unsynced: map[int64]bool{}}
	openSegments.Store(s, struct{}{})
	return s
}

func segmentName(id int64) string { return fmt.Sprintf("seg-%08d.dat", id) }

// segmentIDs lists the segments in dir.
func segmentIDs(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var ids []int64
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "seg-") || !strings.HasSuffix(name, ".dat") || !e.Type().IsRegular() {
			continue
		}
		if id, err := strconv.ParseInt(name[4:len(name)-4], 10, 64); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// next opens a new segment to append to, after every one in the
// directory (a segment is never appended to after a restart: its tail may
// be a write a crash cut). Called with mu held.
func (s *docSegments) next() error {
	if _, err := os.Stat(s.dir); os.IsNotExist(err) {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(s.dir)); err != nil {
			return err
		}
	}
	id := s.active
	if id == 0 {
		ids, err := segmentIDs(s.dir)
		if err != nil {
			return err
		}
		for _, v := range ids {
			id = max(id, v)
		}
	}
	for range 100 {
		id++
		f, err := os.OpenFile(filepath.Join(s.dir, segmentName(id)), os.O_RDWR|os.O_CREATE|os.O_EXCL, privateFileMode)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		// The new name must survive an OS crash as the rows naming it do.
		if err := syncDir(s.dir); err != nil {
			f.Close()
			return err
		}
		s.files[id] = f
		s.active, s.size = id, 0
		return nil
	}
	return fmt.Errorf("store: no free segment name in %s", s.dir)
}

// append writes data to the active segment and returns where; the caller
// calls done(ref) once the transaction naming it has ended, committed or
// not (until then the segment is never removed).
func (s *docSegments) append(data []byte) (docRef, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return docRef{}, errDBClosed
	}
	var retired *os.File
	prev := s.active
	if s.active == 0 || (s.size > 0 && s.size+int64(len(data)) > segmentMax) {
		if err := s.next(); err != nil {
			s.mu.Unlock()
			return docRef{}, err
		}
		if f := s.files[prev]; f != nil && s.inflight[prev] == 0 {
			retired = f // its appends have all ended
		}
	}
	ref := docRef{seg: s.active, off: s.size, n: int64(len(data))}
	s.size += ref.n
	s.inflight[ref.seg]++
	f := s.files[ref.seg]
	s.mu.Unlock()
	if retired != nil {
		s.retire(prev, retired)
	}
	ref.crc = crc32.Checksum(data, castagnoli)
	// One write at a time: concurrent writes to one file contend for its
	// inode in the kernel (8 goroutines appending 26 KB on tmpfs: 27 µs of
	// system time each against 13 alone; 17–19 behind this mutex).
	s.writeMu.Lock()
	_, err := f.WriteAt(data, ref.off)
	s.writeMu.Unlock()
	if err != nil {
		s.done(ref)
		return docRef{}, err
	}
	// Unsynced once written, not before: a sync between the two would
	// find nothing to sync and forget the segment.
	s.mu.Lock()
	s.unsynced[ref.seg] = true
	s.mu.Unlock()
	s.dirty.Store(true)
	return ref, nil
}

// done ends an append's protection from collectSegments. The last append
// to a segment no longer appended to closes it, synced first (its bytes
// are named by committed rows, and the WAL syncs only open segments).
func (s *docSegments) done(ref docRef) {
	s.mu.Lock()
	if s.inflight[ref.seg]--; s.inflight[ref.seg] > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.inflight, ref.seg)
	f, retired := s.files[ref.seg], ref.seg != s.active
	s.mu.Unlock()
	if retired && f != nil {
		s.retire(ref.seg, f)
	}
}

// retire syncs and closes a segment no longer appended to. It stays in
// files, for WAL syncs to sync too, until its own sync is done; one that
// cannot be synced stays, for the next WAL sync to try again.
func (s *docSegments) retire(id int64, f *os.File) {
	if err := f.Sync(); err != nil {
		s.mu.Lock()
		s.unsynced[id] = true
		s.mu.Unlock()
		s.dirty.Store(true)
		return
	}
	s.mu.Lock()
	if s.files[id] != f || s.inflight[id] > 0 {
		s.mu.Unlock()
		return // retired by another call meanwhile
	}
	delete(s.files, id)
	delete(s.unsynced, id)
	s.mu.Unlock()
	f.Close() // a WAL sync that took it from files before finds it closed: synced here
}

// read returns the document ref names, checked against its CRC. It opens
// the segment for itself: the files appends hold are closed when their
// appends end.
func (s *docSegments) read(ref docRef) ([]byte, error) {
	if ref.n < 0 || ref.off < 0 || ref.n > 64<<20 { // a damaged row asks for no huge buffer
		return nil, errDocDamaged
	}
	f, err := os.Open(filepath.Join(s.dir, segmentName(ref.seg)))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errDocDamaged
		}
		return nil, err
	}
	defer f.Close()
	b := make([]byte, ref.n)
	if _, err := f.ReadAt(b, ref.off); err != nil {
		return nil, errDocDamaged // short: the file ends before the document
	}
	if crc32.Checksum(b, castagnoli) != ref.crc {
		return nil, errDocDamaged
	}
	return b, nil
}

// sync writes the segments appended to since the last sync to the disk.
func (s *docSegments) sync() error {
	if !s.dirty.Swap(false) {
		return nil
	}
	s.mu.Lock()
	ids := make([]int64, 0, len(s.unsynced))
	fs := make([]*os.File, 0, len(s.unsynced))
	for id := range s.unsynced {
		if f := s.files[id]; f != nil {
			ids, fs = append(ids, id), append(fs, f)
		}
	}
	clear(s.unsynced)
	s.mu.Unlock()
	var errs []error
	for i, f := range fs {
		if err := f.Sync(); errors.Is(err, os.ErrClosed) {
			continue // retired meanwhile, synced by retire
		} else if err != nil {
			errs = append(errs, err)
			// Tried again with the next checkpoint (a file is synced whole).
			s.mu.Lock()
			if s.files[ids[i]] == f {
				s.unsynced[ids[i]] = true
			}
			s.mu.Unlock()
			s.dirty.Store(true)
		}
	}
	return errors.Join(errs...)
}

// collect removes the segments no row names: not the active one, none
// with an append in flight, and only when used reports (after those
// checks) that no row names it.
func (s *docSegments) collect(ctx context.Context, used func(ctx context.Context, seg int64) (bool, error)) (int, error) {
	ids, err := segmentIDs(s.dir)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, id := range ids {
		s.mu.Lock()
		// Only the process that appends collects, and only older
		// segments: another process opening the database (folio admin)
		// does not know which segment the server appends to.
		busy := s.active == 0 || id >= s.active || s.inflight[id] > 0
		s.mu.Unlock()
		if busy {
			continue
		}
		// No append can go to id any more (only the active segment takes
		// them), and every append to it has ended: its row is committed
		// and visible to this read, or it never will be.
		inUse, err := used(ctx, id)
		if err != nil {
			return removed, err
		}
		if inUse {
			continue
		}
		s.mu.Lock()
		if f := s.files[id]; f != nil {
			f.Close()
			delete(s.files, id)
		}
		delete(s.unsynced, id)
		s.mu.Unlock()
		if err := os.Remove(filepath.Join(s.dir, segmentName(id))); err != nil && !os.IsNotExist(err) {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// openSegments are the segment sets of the open databases, synced before
// any WAL is (walSync): a commit a checkpoint makes durable names bytes
// already on the disk.
var openSegments sync.Map // *docSegments -> struct{}

// syncSegments syncs every open database's unsynced segments.
func syncSegments() error {
	var errs []error
	openSegments.Range(func(k, _ any) bool {
		errs = append(errs, k.(*docSegments).sync())
		return true
	})
	return errors.Join(errs...)
}

// close closes the open segments.
func (s *docSegments) close() error {
	openSegments.Delete(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for id, f := range s.files {
		errs = append(errs, f.Close())
		delete(s.files, id)
	}
	return errors.Join(errs...)
}

// InlineDocuments puts the bytes of the documents kept in segments back
// into their job_files rows, for `folio admin migrate`: PostgreSQL's
// job_files holds the bytes, and the copy moves rows. A document whose
// bytes are damaged or gone loses its row (it reads as gone either way).
// It returns how many rows it changed.
func (db *DB) InlineDocuments(ctx context.Context) (int, error) {
	type row struct {
		id  string
		ref docRef
	}
	n := 0
	for {
		rows, err := db.read.QueryContext(ctx, `SELECT job_id, seg, seg_off, seg_len, seg_crc FROM job_files WHERE seg IS NOT NULL LIMIT 200`)
		if err != nil {
			return n, err
		}
		var batch []row
		for rows.Next() {
			var r row
			var crc int64
			if err := rows.Scan(&r.id, &r.ref.seg, &r.ref.off, &r.ref.n, &crc); err != nil {
				rows.Close()
				return n, err
			}
			r.ref.crc = uint32(crc)
			batch = append(batch, r)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return n, err
		}
		if len(batch) == 0 {
			return n, nil
		}
		err = db.tx(ctx, func(tx *Tx) error {
			for _, r := range batch {
				var b []byte
				err := errDocDamaged
				if db.segs != nil {
					b, err = db.segs.read(r.ref)
				}
				switch {
				case errors.Is(err, errDocDamaged):
					_, err = tx.ExecContext(ctx, `DELETE FROM job_files WHERE job_id = ?`, r.id)
				case err == nil:
					_, err = tx.ExecContext(ctx, `UPDATE job_files SET data = ?, seg = NULL, seg_off = NULL, seg_len = NULL, seg_crc = NULL
						WHERE job_id = ?`, b, r.id)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += len(batch)
	}
}
