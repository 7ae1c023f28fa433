// Copyright ©2021 The go-pdf Authors. All rights reserved.
// Use of this source code is governed by a MIT-style
// license that can be found in the LICENSE file.

package fpdf

import (
	"bytes"
	zlib "github.com/klauspost/compress/zlib"
	"io"
	"sync"
)

var xmem = xmempool{
	Pool: sync.Pool{
		New: func() interface{} {
			var m membuffer
			return &m
		},
	},
}

// zlibWriters keeps compressors for reuse: a new one allocates and clears
// about 600 KB, more than compressing a page costs. A channel rather than a
// sync.Pool, which the garbage collector empties (Folio change).
var zlibWriters = make(chan *zlib.Writer, 8)

func getZlibWriter(w io.Writer) *zlib.Writer {
	select {
	case zw := <-zlibWriters:
		zw.Reset(w)
		return zw
	default:
		zw, _ := zlib.NewWriterLevel(w, zlib.BestSpeed) // a valid level: no error
		return zw
	}
}

// DropCompressors lets the garbage collector have the kept compressors
// (up to 8 of about 600 KB each): an idle server's trim (Folio change).
// The next documents make new ones.
func DropCompressors() {
	for {
		select {
		case <-zlibWriters:
		default:
			return
		}
	}
}

func putZlibWriter(zw *zlib.Writer) {
	select {
	case zlibWriters <- zw:
	default:
	}
}

type xmempool struct{ sync.Pool }

// compress returns data compressed at zlib.BestSpeed. Writing to a
// bytes.Buffer cannot fail, so neither can this (upstream panicked on
// errors that cannot happen).
func (pool *xmempool) compress(data []byte) *membuffer {
	mem := pool.Get().(*membuffer)
	mem.buf.Reset()
	zw := getZlibWriter(&mem.buf)
	_, _ = zw.Write(data)
	_ = zw.Close()
	putZlibWriter(zw)
	return mem
}

// compressBytes returns data compressed at zlib.BestSpeed in a new slice.
func compressBytes(data []byte) []byte {
	mem := xmem.compress(data)
	out := mem.copy()
	mem.release()
	return out
}

func (pool *xmempool) uncompress(data []byte) (*membuffer, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}

	mem := pool.Get().(*membuffer)
	mem.buf.Reset()

	_, err = mem.buf.ReadFrom(zr)
	if err != nil {
		mem.release()
		return nil, err
	}

	return mem, nil
}

type membuffer struct {
	buf bytes.Buffer
}

func (mem *membuffer) bytes() []byte { return mem.buf.Bytes() }
func (mem *membuffer) release() {
	mem.buf.Reset()
	xmem.Put(mem)
}

func (mem *membuffer) copy() []byte {
	src := mem.bytes()
	dst := make([]byte, len(src))
	copy(dst, src)
	return dst
}
