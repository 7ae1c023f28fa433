//go:build linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm)

package store

import (
	"fmt"
	"runtime/debug"
	"sync"
	_ "unsafe" // go:linkname

	"modernc.org/memory"
)

// SQLite's malloc and free are modernc.org/libc's Xmalloc and Xfree: they
// take libc's allocatorMu and serve the call from its allocator, a
// modernc.org/memory.Allocator (libc_musl.go, mem_musl.go). The allocator
// keeps the 64 KB regions SQLite empties for reuse, the newest 4 MB of
// each size class resident (memory.go: retain, hotBytes), and each class's
// empty carve page: after a load, several MB that no connection uses. Its
// Trim unmaps them, but libc exports neither the allocator nor a call to
// it, so the two names below reach into the package. Written against the
// versions in cVersions: a binary built with others leaves the memory
// where it is (cTrimOff), and TestCTrimVersions fails until someone has
// read the new versions' Xmalloc, Xfree and Allocator.Trim again.

//go:linkname libcAllocator modernc.org/libc.allocator
var libcAllocator memory.Allocator

//go:linkname libcAllocatorMu modernc.org/libc.allocatorMu
var libcAllocatorMu sync.Mutex

// cVersions are the module versions the names above were read in.
var cVersions = map[string]string{"modernc.org/libc": "v1.79.0", "modernc.org/memory": "v1.12.1"}

// cTrimOff says why the binary does not trim libc's allocator ("": it does).
var cTrimOff = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "no build information"
	}
	return cVersionsDiffer(info.Deps)
})

// cVersionsDiffer names the first module of cVersions that deps (a
// binary's dependencies) lack, hold at another version or replace; ""
// when none does.
func cVersionsDiffer(deps []*debug.Module) string {
	for path, want := range cVersions {
		got, replaced := "", false
		for _, d := range deps {
			if d.Path == path {
				got, replaced = d.Version, replaced || d.Replace != nil
			}
		}
		switch {
		case replaced:
			return fmt.Sprintf("%s is replaced, the allocator trim was written for %s", path, want)
		case got != want:
			return fmt.Sprintf("%s is %q, the allocator trim was written for %s", path, got, want)
		}
	}
	return ""
}

// trimC returns the empty regions libc's allocator keeps to the system,
// under the lock every malloc and free takes; nothing when the binary was
// built with other versions of libc or memory than cVersions.
func trimC() error {
	if cTrimOff() != "" {
		return nil
	}
	libcAllocatorMu.Lock()
	defer libcAllocatorMu.Unlock()
	if err := libcAllocator.Trim(); err != nil {
		return fmt.Errorf("trim the C allocator: %w", err)
	}
	return nil
}
