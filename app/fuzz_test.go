package app

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzDownloadVerify: the signed-URL verifier never panics and accepts only
// the exact signature of the exact job and expiry, unexpired.
func FuzzDownloadVerify(f *testing.F) {
	d := Downloads{Key: []byte("0123456789abcdef0123456789abcdef"), BaseURL: "https://x"}
	now := time.Unix(1_800_000_000, 0)
	good := d.signature("job_a", 1_800_000_100)
	f.Add("job_a", "1800000100", good)
	f.Add("job_a", "1800000100", strings.ToUpper(good))
	f.Add("job_b", "1800000100", good)
	f.Add("job_a", "99999999999999999999999", good)
	f.Add("", "", "")
	f.Add("job_a", "-1", "zz")
	f.Fuzz(func(t *testing.T, job, expires, sig string) {
		err := d.Verify(job, expires, sig, now)
		if err == nil {
			e, perr := strconv.ParseInt(expires, 10, 64)
			if perr != nil || e <= now.Unix() || sig != d.signature(job, e) {
				t.Fatalf("accepted job=%q expires=%q sig=%q", job, expires, sig)
			}
		} else if ErrorCode(err) != ECodeDownloadDenied {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// fuzzKeys is a KeyStore that knows one key.
type fuzzKeys struct {
	KeyStore
	hash string
}

func (k fuzzKeys) FindAPIKeyByHash(_ context.Context, hash string) (*APIKey, error) {
	if hash == k.hash {
		return &APIKey{ID: "key_1", TeamID: "team_1", IsActive: true, CreatedBy: "usr_1"}, nil
	}
	return nil, ErrNotFound(ECodeKeyNotFound, "API key")
}
func (fuzzKeys) TouchAPIKey(context.Context, string, time.Time) error { return nil }

type fuzzUsers struct{ UserStore }

func (fuzzUsers) FindUserByID(context.Context, string) (*User, error) {
	return nil, ErrNotFound(ECodeUserNotFound, "user")
}

// FuzzAuthenticate: any bearer token (API-key text or JWT) is parsed without
// panicking, and nothing but the one real key authenticates.
func FuzzAuthenticate(f *testing.F) {
	real := KeyPrefix + strings.Repeat("A", 40)
	s := &AuthService{Keys: fuzzKeys{hash: HashToken(real)}, Users: fuzzUsers{}, Config: AuthConfig{JWTKey: []byte("k")}, Now: time.Now}
	for _, seed := range []string{real, KeyPrefix, "svc_sk_x", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c3JfMSJ9.", "a.b.c", "", strings.Repeat("x", 5000)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := s.Authenticate(context.Background(), tok, "")
		if err == nil && tok != real {
			t.Fatalf("token %q authenticated as %+v", tok, p)
		}
		if err != nil && ErrorCode(err) == "" {
			t.Fatalf("token %q: non-envelope error %v", tok, err)
		}
	})
}
