package storetest

import (
	"bytes"
	"testing"

	"folio/app"
)

// RunSecrets runs the cases of the server's keys on a store made by open:
// the files of an embedded install and PostgreSQL's table.
func RunSecrets(t *testing.T, open func(testing.TB) app.Secrets) {
	t.Run("CreatedOnceAndKept", func(t *testing.T) { secretsCreatedOnceAndKept(t, open(t)) })
}

// secretsCreatedOnceAndKept: each key is 32 bytes, the same at every
// call, and each name has its own.
func secretsCreatedOnceAndKept(t *testing.T, s app.Secrets) {
	seen := map[string][]byte{}
	for _, name := range []string{app.SecretJWT, app.SecretDownload, app.SecretSigning} {
		k, err := s.Secret(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(k) != 32 || bytes.Equal(k, make([]byte, 32)) {
			t.Fatalf("%s: %x", name, k)
		}
		again, err := s.Secret(ctx, name)
		if err != nil || !bytes.Equal(again, k) {
			t.Fatalf("%s read again: %x, %v; first %x", name, again, err, k)
		}
		for other, v := range seen {
			if bytes.Equal(v, k) {
				t.Fatalf("%s and %s have the same key", name, other)
			}
		}
		seen[name] = k
	}
}
