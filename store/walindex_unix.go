//go:build unix

package store

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// walIndex is the first page of the database's -shm file (the WAL-index,
// https://sqlite.org/walformat.html), mapped read-only and shared. Its
// header changes in every write transaction's commit, whichever process or
// connection makes it (mxFrame, the frame checksums and iChange; a WAL
// that starts over gets new salts), and not otherwise: while it reads the
// same, nothing was committed, and a value read from the database since is
// still current (DB.MetadataGeneration). SQLite keeps the file for as long
// as a connection of this process has the database open (the last one to
// close removes it); DB keeps one open for that (DB.shmPin).
type walIndex struct {
	mu  sync.RWMutex // Close unmaps under it
	mem []byte
}

// walIndexHeader is the header's first copy, as 32-bit words: SQLite
// writes the second copy first and this one last, so a read during a
// commit sees a header that differs from the one before it.
type walIndexHeader [12]uint32

// walIndexMin is the size of a WAL-index file once initialized (its first
// 32 KB region); a smaller file is being created and is not mapped (a read
// past its end would fault).
const walIndexMin = 32 << 10

// mapWALIndex maps path's first page, or returns nil when it cannot: the
// header is then never known, and every read goes to the database.
func mapWALIndex(path string) *walIndex {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < walIndexMin {
		return nil
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, os.Getpagesize(), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return &walIndex{mem: mem}
}

// header returns the header, and false when it is not known (no mapping,
// or a WAL-index not initialized or of another version).
func (w *walIndex) header() (h walIndexHeader, ok bool) {
	if w == nil {
		return h, false
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.mem == nil {
		return h, false
	}
	p := unsafe.Pointer(&w.mem[0])
	for i := range h {
		h[i] = atomic.LoadUint32((*uint32)(unsafe.Add(p, 4*i)))
	}
	// iVersion is 3007000 in every SQLite since WAL began; isInit is the
	// byte at offset 12.
	if h[0] != 3007000 || w.mem[12] != 1 {
		return h, false
	}
	return h, true
}

// close unmaps the page; header reports nothing after it.
func (w *walIndex) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mem != nil {
		_ = syscall.Munmap(w.mem)
		w.mem = nil
	}
}
