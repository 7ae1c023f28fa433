package app

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomString returns n random base62 characters from crypto/rand.
func RandomString(n int) string {
	out := make([]byte, n)
	buf := make([]byte, n+n/2+8)
	i := 0
	for i < n {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			// 248 = 4*62: reject the tail so every character is equally likely.
			if b >= 248 {
				continue
			}
			out[i] = base62[b%62]
			i++
			if i == n {
				break
			}
		}
	}
	return string(out)
}

// NewID returns a random identifier with a type prefix, e.g. "usr_3kF9...".
func NewID(prefix string) string { return prefix + "_" + RandomString(20) }

// HashToken returns the hex SHA-256 of a secret (API key, refresh token, mail
// token, backup code). Secrets are stored only in this form.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
