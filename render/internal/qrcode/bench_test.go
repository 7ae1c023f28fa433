package qrcode

import (
	"testing"

	upstream "github.com/skip2/go-qrcode"
)

// benchText is an EPC (SEPA credit transfer) payment QR payload, the QR
// code on every invoice.
const benchText = "BCD\n002\n1\nSCT\nDEUTDEFF\nNordlicht GmbH\nDE89370400440532013000\nEUR1234.56\n\n\nINV-2026-0042"

func BenchmarkQRFork(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		q, err := New(benchText, Medium)
		if err != nil {
			b.Fatal(err)
		}
		_ = q.Bitmap()
	}
}

func BenchmarkQRUpstream(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		q, err := upstream.New(benchText, upstream.Medium)
		if err != nil {
			b.Fatal(err)
		}
		_ = q.Bitmap()
	}
}
