package app

import "context"

// Names of the server's keys (Secrets).
const (
	SecretJWT      = "jwt"      // signs access tokens
	SecretDownload = "download" // signs download links
	SecretSigning  = "signing"  // seals the teams' signing keys (SigningService.KEK)
)

// Secrets keeps the server's keys: 32 random bytes each, created at first
// use and the same ever after, for every replica (the files keys/*.key of
// an embedded install; a table under --database-url, so that a token
// signed by one replica is verified by another).
type Secrets interface {
	Secret(ctx context.Context, name string) ([]byte, error)
}
