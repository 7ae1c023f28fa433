package app

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestDummyHashCost checks that the hash compared for unknown accounts
// costs what a real password check does, so timing does not reveal which
// emails have accounts.
func TestDummyHashCost(t *testing.T) {
	cost, err := bcrypt.Cost(dummyHash)
	if err != nil || cost != bcrypt.DefaultCost {
		t.Fatalf("cost %d, %v; want %d", cost, err, bcrypt.DefaultCost)
	}
	if bcrypt.CompareHashAndPassword(dummyHash, []byte("folio-timing-equalizer")) != nil {
		t.Fatal("dummyHash is not a valid bcrypt hash")
	}
}
