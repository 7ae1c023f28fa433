package s3files

import (
	"context"
	"io"

	"github.com/minio/minio-go/v7"
)

// Object is what the store says about one stored object.
type Object struct {
	Size int64
	// ETag is the store's entity tag, without quotes: for most stores the
	// MD5 of the bytes of a single PUT, or of the parts' MD5s followed by
	// "-N" for a multipart upload of N parts (folio admin migrate checks
	// it against the local file's).
	ETag string
}

// PartSize is the part size of this store's multipart uploads; objects of
// at most this size are stored with one PUT.
func (s *Store) PartSize() int64 { return int64(s.cfg.PartSize) }

// Stat returns the size and ETag of name's object; the error wraps
// fs.ErrNotExist when there is none.
func (s *Store) Stat(ctx context.Context, name string) (Object, error) {
	key, err := s.key(name)
	if err != nil {
		return Object{}, err
	}
	info, err := s.client.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Object{}, s.unavailable("stat", key, err)
	}
	return Object{Size: info.Size, ETag: info.ETag}, nil
}

// Put stores size bytes read from r as name: one PUT up to PartSize,
// else a multipart upload of PartSize parts (so the ETag can be computed
// from the bytes, see Object.ETag).
func (s *Store) Put(ctx context.Context, name string, r io.Reader, size int64) (Object, error) {
	key, err := s.key(name)
	if err != nil {
		return Object{}, err
	}
	opts := s.putOptions()
	opts.DisableMultipart = size <= s.PartSize()
	info, err := s.client.PutObject(ctx, s.cfg.Bucket, key, r, size, opts)
	if err != nil {
		return Object{}, s.unavailable("put", key, err)
	}
	return Object{Size: info.Size, ETag: info.ETag}, nil
}
