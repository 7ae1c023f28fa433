// Command fontpack prepares the fonts of package assets for embedding
// (go generate in assets/): it compresses each fonts/**/*.ttf with zstd to
// a .ttf.zst beside it (and removes the .ttf), then writes
// fonts/coverage.bin, the characters each font has, so the engine can
// choose fallbacks and report missing characters without decompressing
// or parsing a font it does not draw with.
//
// coverage.bin is, for each font in path order: uvarint length and the
// path (relative to fonts/, with the .ttf.zst), uvarint number of ranges,
// then per range uvarint (lo - previous hi) and uvarint (hi - lo).
package main

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"

	"folio/render/text"
)

func main() {
	log.SetFlags(0)
	dir := "fonts"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	var packed []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".ttf"):
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if _, err := text.ParseFace(filepath.Base(p), raw); err != nil {
				return err
			}
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
			if err != nil {
				return err
			}
			z := enc.EncodeAll(raw, nil)
			if err := os.WriteFile(p+".zst", z, 0o644); err != nil {
				return err
			}
			log.Printf("%s: %d -> %d bytes", p, len(raw), len(z))
			packed = append(packed, p+".zst")
			return os.Remove(p)
		case strings.HasSuffix(p, ".ttf.zst"):
			packed = append(packed, p)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	sort.Strings(packed)
	packed = compact(packed)
	dec, err := zstd.NewReader(nil)
	if err != nil {
		log.Fatal(err)
	}
	var out []byte
	for _, p := range packed {
		z, err := os.ReadFile(p)
		if err != nil {
			log.Fatal(err)
		}
		raw, err := dec.DecodeAll(z, nil)
		if err != nil {
			log.Fatalf("%s: %v", p, err)
		}
		face, err := text.ParseFace(filepath.Base(p), raw)
		if err != nil {
			log.Fatal(err)
		}
		cov := face.Coverage()
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		out = binary.AppendUvarint(out, uint64(len(rel)))
		out = append(out, rel...)
		out = binary.AppendUvarint(out, uint64(len(cov)/2))
		prev := uint32(0)
		for i := 0; i < len(cov); i += 2 {
			out = binary.AppendUvarint(out, uint64(cov[i]-prev))
			out = binary.AppendUvarint(out, uint64(cov[i+1]-cov[i]))
			prev = cov[i+1]
		}
		fmt.Printf("%s: %d ranges\n", rel, len(cov)/2)
	}
	if err := os.WriteFile(filepath.Join(dir, "coverage.bin"), out, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %d bytes", filepath.Join(dir, "coverage.bin"), len(out))
}

func compact(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
