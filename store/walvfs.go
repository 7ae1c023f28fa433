package store

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The WAL's frames in one write (issue 24, tenth session). SQLite writes a
// WAL frame as two pwrite calls, its 24-byte header and then its page, so
// a synchronous generate's commit of ~24 pages made ~48 system calls; on
// this machine's VM each cost ~3.3 µs, a third of the writer's CPU. The
// "folio" VFS is SQLite's default one with the WAL file's writes gathered:
// a frame header that does not end a transaction starts a buffer, the
// writes that follow it in the file are appended, and the buffer goes to
// the file in one pwrite together with the header of the frame that
// commits (whose page is then written on its own). Any other call on the
// WAL file (a read, a sync, a truncate, its size, a write elsewhere, its
// close) writes the buffer first.
//
// Why no one can see a frame still in the buffer: other connections and
// processes find frames only through the WAL-index header, and SQLite
// writes that header after the last frame of a commit, which is written
// at once with everything before it. The frames of a transaction not yet
// committed (a cache spill) are read back only by their own connection,
// through this file, which writes the buffer first. A process killed
// with frames in the buffer had not committed them: SQLite treats the
// WAL after a crash exactly as when it died between its own writes.
// Errors of the gathered write are returned by the call that made it
// (the commit's header write, or the call that found a buffer). A buffer
// never outlives its write transaction: what is left when the connection
// releases its write lock is dropped (dbShmLock).
//
// docs/decisions.md, "The WAL's frames in one write".

// walVFSName is the VFS the store's connections open with (dsn: vfs=).
const walVFSName = "folio"

// walBufMax bounds a buffer: past it the frames gathered are written.
// SQLite's unix VFS writes at most 0x1ffff bytes in one call (it masks
// the length in seekAndWriteFd), so a buffer stays under 128 KB.
const walBufMax = 0x1ffff

const walFrameHeader = 24

var (
	walVFSOnce sync.Once
	walVFSErr  error

	walVFS     sqlite3.Tsqlite3_vfs        // a copy of the default VFS, xOpen replaced
	walMethods sqlite3.Tsqlite3_io_methods // a WAL file's methods, some wrapped
	dbMethods  sqlite3.Tsqlite3_io_methods // a database file's methods, xShmLock wrapped
	baseVFS    uintptr                     // the default VFS (unix)
	baseFile   int32                       // its szOsFile: our handle is stored after it
	walBase    atomic.Uintptr              // the methods walMethods wraps (set once)
	dbBase     atomic.Uintptr              // the methods dbMethods wraps (set once)
	wrapMu     sync.Mutex

	walFiles   sync.Map // handle -> *walFile
	walOfDB    sync.Map // a database file (sqlite3_file address) -> its WAL's *walFile
	walHandles atomic.Uint64

	// walWrites counts the writes the wrapper made to WAL files (tests).
	walWrites atomic.Int64
	// walCommitFrames counts the commit frames written to WAL files by
	// this process: a COMMIT during which it rose by one wrote frames
	// (DB.generationCommitted).
	walCommitFrames atomic.Int64
)

// walFile is the buffer of one open WAL file. SQLite uses a file from one
// thread at a time (its connection's), so it needs no lock of its own.
type walFile struct {
	buf    []byte
	off    int64                        // the file offset of buf[0]
	base   *sqlite3.Tsqlite3_io_methods // the default VFS's methods for it
	dbFile uintptr                      // its database file
}

type (
	fnOpen     = func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32
	fnClose    = func(*libc.TLS, uintptr) int32
	fnRW       = func(*libc.TLS, uintptr, uintptr, int32, int64) int32
	fnTruncate = func(*libc.TLS, uintptr, int64) int32
	fnSync     = func(*libc.TLS, uintptr, int32) int32
	fnSize     = func(*libc.TLS, uintptr, uintptr) int32
	fnControl  = func(*libc.TLS, uintptr, int32, uintptr) int32
	fnShmLock  = func(*libc.TLS, uintptr, int32, int32, int32) int32
)

// registerWALVFS registers the "folio" VFS once per process.
func registerWALVFS() error {
	walVFSOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		baseVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
		if baseVFS == 0 {
			walVFSErr = errNoVFS
			return
		}
		walVFS = *(*sqlite3.Tsqlite3_vfs)(ptr(baseVFS))
		baseFile = (walVFS.FszOsFile + 7) &^ 7
		walVFS.FszOsFile = baseFile + 8
		walVFS.FpNext = 0
		name, err := libc.CString(walVFSName)
		if err != nil {
			walVFSErr = err
			return
		}
		walVFS.FzName = name
		*(*fnOpen)(unsafe.Pointer(&walVFS.FxOpen)) = walOpen
		if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&walVFS)), 0); rc != sqlite3.SQLITE_OK {
			walVFSErr = errNoVFS
		}
	})
	return walVFSErr
}

type vfsError string

func (e vfsError) Error() string { return string(e) }

const errNoVFS = vfsError("store: cannot register the SQLite VFS")

// ptr is the address u holds: SQLite's structures live in memory its Go
// translation addresses with uintptr (modernc.org/libc), never moved.
func ptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// cbytes is the n bytes at u. Not inlined: Go 1.26's compiler fails
// (disjointTypes) on an append from such a slice in the caller.
//
//go:noinline
func cbytes(u uintptr, n int32) []byte { return unsafe.Slice((*byte)(ptr(u)), n) }

// handleOf is where a file's handle is kept: after the default VFS's own
// file structure, in the space walVFS.FszOsFile adds.
func handleOf(pFile uintptr) *uint64 { return (*uint64)(ptr(pFile + uintptr(baseFile))) }

func walOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	*handleOf(pFile) = 0
	open := *(*fnOpen)(unsafe.Pointer(&(*sqlite3.Tsqlite3_vfs)(ptr(baseVFS)).FxOpen))
	rc := open(tls, baseVFS, zName, pFile, flags, pOutFlags)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	file := (*sqlite3.Tsqlite3_file)(ptr(pFile))
	if file.FpMethods == 0 {
		return rc
	}
	switch {
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0:
		if wrapMethods(&dbBase, file.FpMethods) {
			file.FpMethods = uintptr(unsafe.Pointer(&dbMethods))
		}
	case flags&sqlite3.SQLITE_OPEN_WAL != 0:
		// Gathered only when its database file's write lock is watched
		// (dbShmLock): a buffer must not outlive the transaction.
		db := sqlite3.Xsqlite3_database_file_object(tls, zName)
		if db == 0 || (*sqlite3.Tsqlite3_file)(ptr(db)).FpMethods != uintptr(unsafe.Pointer(&dbMethods)) ||
			!wrapMethods(&walBase, file.FpMethods) {
			return rc
		}
		h := walHandles.Add(1)
		f := &walFile{base: (*sqlite3.Tsqlite3_io_methods)(ptr(file.FpMethods)), dbFile: db}
		walFiles.Store(h, f)
		walOfDB.Store(db, f)
		*handleOf(pFile) = h
		file.FpMethods = uintptr(unsafe.Pointer(&walMethods))
	}
	return rc
}

// wrapMethods builds walMethods (seen is walBase) or dbMethods (dbBase)
// from the first such file's methods: the unix VFS gives a WAL methods
// without locks, a database file others. A file whose methods differ
// from the first of its kind (none on one platform) is left as it is.
func wrapMethods(seen *atomic.Uintptr, m uintptr) bool {
	if b := seen.Load(); b != 0 {
		return b == m
	}
	wrapMu.Lock()
	defer wrapMu.Unlock()
	if b := seen.Load(); b != 0 {
		return b == m
	}
	if seen == &dbBase {
		dbMethods = *(*sqlite3.Tsqlite3_io_methods)(ptr(m))
		if dbMethods.FiVersion < 2 || dbMethods.FxShmLock == 0 {
			return false // no WAL-index: nothing to watch
		}
		*(*fnShmLock)(unsafe.Pointer(&dbMethods.FxShmLock)) = dbShmLock
		dbBase.Store(m)
		return true
	}
	walMethods = *(*sqlite3.Tsqlite3_io_methods)(ptr(m))
	*(*fnClose)(unsafe.Pointer(&walMethods.FxClose)) = walClose
	*(*fnRW)(unsafe.Pointer(&walMethods.FxRead)) = walRead
	*(*fnRW)(unsafe.Pointer(&walMethods.FxWrite)) = walWrite
	*(*fnTruncate)(unsafe.Pointer(&walMethods.FxTruncate)) = walTruncate
	*(*fnSync)(unsafe.Pointer(&walMethods.FxSync)) = walSync
	*(*fnSize)(unsafe.Pointer(&walMethods.FxFileSize)) = walFileSize
	*(*fnControl)(unsafe.Pointer(&walMethods.FxFileControl)) = walFileControl
	walBase.Store(m)
	return true
}

// walWriteLock is the WAL-index lock a write transaction holds (SQLite's
// WAL_WRITE_LOCK, the first of its shared-memory locks).
const walWriteLock = 0

// dbShmLock drops what the WAL buffer still holds when the connection
// gives up its write lock. A committed transaction left nothing there (its
// commit wrote the buffer); what is left are frames of a transaction rolled
// back after a cache spill, or of a commit whose write failed, which SQLite
// will never read. Written later, they could land on frames another
// connection or process committed at the same place after this lock was
// released (found by review, reproduced: TestWALRolledBackSpillNotWrittenLater).
// SQLite calls a database file only from its connection's thread, the
// thread that uses its WAL file.
func dbShmLock(tls *libc.TLS, pFile uintptr, offset, n, flags int32) int32 {
	if flags == sqlite3.SQLITE_SHM_UNLOCK|sqlite3.SQLITE_SHM_EXCLUSIVE && offset <= walWriteLock && offset+n > walWriteLock {
		if f, ok := walOfDB.Load(pFile); ok {
			f.(*walFile).buf = f.(*walFile).buf[:0]
		}
	}
	return (*(*fnShmLock)(unsafe.Pointer(&(*sqlite3.Tsqlite3_io_methods)(ptr(dbBase.Load())).FxShmLock)))(tls, pFile, offset, n, flags)
}

func fileOf(pFile uintptr) *walFile {
	f, _ := walFiles.Load(*handleOf(pFile))
	return f.(*walFile)
}

// flush writes what f gathered. A failed write is dropped, as a write
// SQLite made itself would have left nothing (or junk) there: the call
// returns the error and SQLite fails its transaction.
func (f *walFile) flush(tls *libc.TLS, pFile uintptr) int32 {
	if len(f.buf) == 0 {
		return sqlite3.SQLITE_OK
	}
	write := *(*fnRW)(unsafe.Pointer(&f.base.FxWrite))
	rc := write(tls, pFile, uintptr(unsafe.Pointer(&f.buf[0])), int32(len(f.buf)), f.off)
	walWrites.Add(1)
	f.buf = f.buf[:0]
	return rc
}

// pending writes what was gathered before another call on the file.
func pending(tls *libc.TLS, pFile uintptr) (*walFile, int32) {
	f := fileOf(pFile)
	return f, f.flush(tls, pFile)
}

func walWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := fileOf(pFile)
	p := cbytes(zBuf, iAmt)
	header := iAmt == walFrameHeader
	commits := header && binary.BigEndian.Uint32(p[4:8]) != 0
	if len(f.buf) > 0 {
		if iOfst == f.off+int64(len(f.buf)) && len(f.buf)+len(p) <= walBufMax {
			f.buf = append(f.buf, p...)
			if commits {
				rc := f.flush(tls, pFile)
				if rc == sqlite3.SQLITE_OK {
					walCommitFrames.Add(1)
				}
				return rc
			}
			return sqlite3.SQLITE_OK
		}
		if rc := f.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if header && !commits {
		f.buf = append(f.buf, p...)
		f.off = iOfst
		return sqlite3.SQLITE_OK
	}
	walWrites.Add(1)
	rc := (*(*fnRW)(unsafe.Pointer(&f.base.FxWrite)))(tls, pFile, zBuf, iAmt, iOfst)
	if commits && rc == sqlite3.SQLITE_OK {
		walCommitFrames.Add(1)
	}
	return rc
}

func walRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f, rc := pending(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*fnRW)(unsafe.Pointer(&f.base.FxRead)))(tls, pFile, zBuf, iAmt, iOfst)
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	f, rc := pending(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*fnTruncate)(unsafe.Pointer(&f.base.FxTruncate)))(tls, pFile, size)
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	f, rc := pending(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	if err := syncSegments(); err != nil {
		return sqlite3.SQLITE_IOERR_FSYNC // the WAL is not synced before the documents its rows name
	}
	return (*(*fnSync)(unsafe.Pointer(&f.base.FxSync)))(tls, pFile, flags)
}

func walFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	f, rc := pending(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*fnSize)(unsafe.Pointer(&f.base.FxFileSize)))(tls, pFile, pSize)
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	f, rc := pending(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*fnControl)(unsafe.Pointer(&f.base.FxFileControl)))(tls, pFile, op, pArg)
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	h := *handleOf(pFile)
	f, rc := pending(tls, pFile)
	walFiles.Delete(h)
	walOfDB.CompareAndDelete(f.dbFile, f)
	if rc2 := (*(*fnClose)(unsafe.Pointer(&f.base.FxClose)))(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	return rc
}
