package transfer

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"folio/store/s3files"
)

// localSum is what a local file's bytes give: its size, SHA-256, and the
// ETag S3 computes for it when it is stored as Put stores it (the MD5 of
// one PUT, or of the parts' MD5s and "-N" for N parts).
type localSum struct {
	size   int64
	sha256 []byte
	etag   string
}

func sumFile(path string, partSize int64) (localSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return localSum{}, err
	}
	defer f.Close()
	whole := sha256.New()
	var parts [][]byte
	var s localSum
	for {
		part := md5.New()
		n, err := io.Copy(io.MultiWriter(part, whole), io.LimitReader(f, partSize))
		if err != nil {
			return localSum{}, err
		}
		if n == 0 && len(parts) > 0 {
			break
		}
		s.size += n
		parts = append(parts, part.Sum(nil))
		if n < partSize {
			break
		}
	}
	s.sha256 = whole.Sum(nil)
	if s.size <= partSize {
		s.etag = hex.EncodeToString(parts[0])
	} else {
		all := md5.Sum(bytes.Join(parts, nil))
		s.etag = hex.EncodeToString(all[:]) + "-" + strconv.Itoa(len(parts))
	}
	return s, nil
}

// copyFiles copies <data>/files into the bucket under the same names
// (what the records hold: team/job.pdf, assets/..., avatars/...), and
// verifies each object: a file the bucket already holds with its size
// and checksum is not sent again.
func copyFiles(ctx context.Context, o Options, dst *s3files.Store, r *Report) error {
	root := filepath.Join(o.Data, "files")
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return err // .tmp-: a write the server never finished
		}
		rel, err := filepath.Rel(root, p)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", root, err)
	}
	partSize := dst.PartSize()
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(root, filepath.FromSlash(name))
		sum, err := sumFile(path, partSize)
		if err != nil {
			return err
		}
		r.Files.Count++
		r.Files.Bytes += sum.size
		ok, err := matches(ctx, dst, name, sum, &r.Files)
		if err != nil {
			return err
		}
		if !ok {
			if err := putFile(ctx, dst, name, path, sum.size); err != nil {
				return err
			}
			r.Files.Copied++
			if ok, err = matches(ctx, dst, name, sum, &r.Files); err != nil {
				return err
			}
		}
		if ok {
			r.Files.Verified++
		} else {
			r.problem("file %s: the bucket's object does not match the local file after copying it", name)
		}
		if o.afterStep != nil {
			o.afterStep()
		}
	}
	fmt.Fprintf(o.Log, "files: %d (%d bytes), %d copied by this run, %d verified\n", r.Files.Count, r.Files.Bytes, r.Files.Copied, r.Files.Verified)
	return nil
}

func putFile(ctx context.Context, dst *s3files.Store, name, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := dst.Put(ctx, name, f, size); err != nil {
		return fmt.Errorf("copy %s: %w", name, err)
	}
	return nil
}

// matches reports whether the bucket holds name with sum's bytes: same
// size and the ETag the bytes give, or, for stores whose ETag is not an
// MD5 (encrypted with KMS, other part sizes), the same SHA-256 read back.
func matches(ctx context.Context, dst *s3files.Store, name string, sum localSum, fc *FileCounts) (bool, error) {
	obj, err := dst.Stat(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if obj.Size != sum.size {
		return false, nil
	}
	if strings.EqualFold(obj.ETag, sum.etag) {
		return true, nil
	}
	rc, _, err := dst.OpenFile(name)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return false, err
	}
	fc.ReadBack++
	return bytes.Equal(h.Sum(nil), sum.sha256), nil
}
