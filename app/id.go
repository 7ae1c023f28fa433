package app

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"
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

// IDTimeChars is how many of a time-ordered ID's 20 characters encode its
// creation time: milliseconds since 1970 in base62, most significant
// first (62^8 ms is about 6,900 years, until the year 8888).
const IDTimeChars = 8

// NewTimeID returns an identifier of NewID's shape (prefix, "_", 20 base62
// characters) whose first IDTimeChars characters are at's milliseconds and
// the other 12 random (71 bits). IDs of rows written at volume (jobs,
// batches, events, deliveries, activity) are made so: each new row's key
// lands at the right edge of its table's primary-key index instead of on a
// random leaf page, which at millions of rows is rarely cached
// (docs/decisions.md, "Time-ordered IDs"). Later milliseconds sort after
// earlier ones (base62's digits are in ASCII order); within a millisecond
// the order is random.
func NewTimeID(prefix string, at time.Time) string {
	return prefix + "_" + IDTime(at) + RandomString(20-IDTimeChars)
}

// IDTime is the IDTimeChars characters that begin a time-ordered ID made
// at at: its milliseconds since 1970, clamped to the range they can say.
func IDTime(at time.Time) string {
	ms := at.UnixMilli()
	const limit = 62 * 62 * 62 * 62 * 62 * 62 * 62 * 62
	ms = min(max(ms, 0), limit-1)
	var out [IDTimeChars]byte
	for i := IDTimeChars - 1; i >= 0; i-- {
		out[i] = base62[ms%62]
		ms /= 62
	}
	return string(out[:])
}

// HashToken returns the hex SHA-256 of a secret (API key, refresh token, mail
// token, backup code). Secrets are stored only in this form.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
