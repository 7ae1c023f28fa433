package app

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// DropFilePages takes the executable's read-only pages (code, read-only
// data) out of the process's resident set: madvise(MADV_DONTNEED) on each
// of its private, read-only mappings. The pages stay in the kernel's page
// cache, clean and shared; the next use maps them again with a minor
// fault, from the file. A mapping holding any page of its own (Anonymous
// in smaps: written before it was made read-only, as a dynamic loader's
// relocations are) is left alone, since dropping would lose that page's
// content. After a load the code and tables the load touched are about
// 27 MB, half of the RSS an idle Folio reports, though the system can
// take them back at any time (docs/decisions.md, "CPU per document and
// memory after a load, issue 24"). It returns the bytes dropped.
func DropFilePages() int64 {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	defer f.Close()
	type span struct {
		start, end uintptr
		ok         bool // read-only, private, of the executable, no page of its own
	}
	var spans []span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if lo, hi, isRange := bytes.Cut(fields[0], []byte("-")); isRange && len(fields) >= 5 {
			// 00400000-00c4e000 r-xp 00000000 fd:01 1234 /path/to/folio
			start, err1 := strconv.ParseUint(string(lo), 16, 64)
			end, err2 := strconv.ParseUint(string(hi), 16, 64)
			perms := fields[1]
			ok := err1 == nil && err2 == nil && end > start && len(fields) >= 6 && string(fields[5]) == exe &&
				len(perms) == 4 && perms[0] == 'r' && perms[1] == '-' && perms[3] == 'p'
			spans = append(spans, span{uintptr(start), uintptr(end), ok})
			continue
		}
		if string(fields[0]) == "Anonymous:" && len(spans) > 0 && len(fields) >= 2 && string(fields[1]) != "0" {
			spans[len(spans)-1].ok = false
		}
	}
	if sc.Err() != nil {
		return 0
	}
	var n int64
	for _, s := range spans {
		if !s.ok {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, s.start, s.end-s.start, syscall.MADV_DONTNEED); errno == 0 {
			n += int64(s.end - s.start)
		}
	}
	return n
}
