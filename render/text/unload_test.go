package text

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"folio/assets"
)

// notoSans returns Noto Sans Regular's bundled file.
func notoSans(t *testing.T) *assets.FontFile {
	t.Helper()
	for _, ff := range assets.Fonts().Families {
		if ff.Name == "Noto Sans" {
			return ff.Regular
		}
	}
	t.Fatal("no Noto Sans")
	return nil
}

// TestUnloadFaces: a bundled lazy face (made with its coverage) is let go
// by UnloadFaces and parsed again on its next use, measuring and subsetting
// as before; a team's or operator's lazy file (no coverage) and a parsed
// face stay loaded; a face whose file cannot be read stays failed.
func TestUnloadFaces(t *testing.T) {
	file := notoSans(t)
	bundled := NewLazyFace("NotoSans-Regular", file.Coverage, file.Bytes)
	own := NewLazyFace("Own-Regular", nil, file.Bytes)
	b, err := file.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseFace("Parsed-Regular", b)
	if err != nil {
		t.Fatal(err)
	}
	gid := uint16(36)
	adv := bundled.Advance(gid)
	sub, n, err := bundled.Subset([]uint16{0, gid})
	if err != nil || adv == 0 || own.Advance(gid) != adv || parsed.Advance(gid) != adv {
		t.Fatalf("advance %d, subset %v", adv, err)
	}
	if !bundled.Loaded() || !own.Loaded() {
		t.Fatal("faces not loaded after use")
	}
	held := bundled.ready() // a render's state, kept across the unload
	loads := Loads.Load()
	if got := UnloadFaces(); got < 1 {
		t.Fatalf("UnloadFaces unloaded %d faces", got)
	}
	if bundled.Loaded() {
		t.Fatal("bundled face still loaded")
	}
	if !own.Loaded() || !parsed.Loaded() {
		t.Fatal("a team's file or a parsed face was unloaded")
	}
	if held.sf.numGlyphs == 0 {
		t.Fatal("held state emptied")
	}
	if got := bundled.Advance(gid); got != adv {
		t.Fatalf("advance after reload %d, want %d", got, adv)
	}
	if Loads.Load() != loads+1 {
		t.Fatalf("%d parses after the unload, want 1", Loads.Load()-loads)
	}
	sub2, n2, err := bundled.Subset([]uint16{0, gid})
	if err != nil || n2 != n || string(sub2) != string(sub) {
		t.Fatalf("subset after reload differs (%d, %d bytes): %v", n, n2, err)
	}
	if UnloadFaces() < 1 || UnloadFaces() != 0 {
		t.Fatal("a second unload found nothing, or a third found something")
	}

	bad := NewLazyFace("Bad", []uint32{'A', 'Z'}, func() ([]byte, error) { return nil, errors.New("gone") })
	if bad.usable() || bad.Err() == nil {
		t.Fatal("a face that cannot be read is usable")
	}
	UnloadFaces()
	if bad.Err() == nil || bad.Covers('B') != true {
		t.Fatal("a failed face changed after an unload")
	}
}

// TestUnloadFacesWhileShaping unloads the bundled faces again and again
// while goroutines shape and measure with them (go test -race): every
// line measures as with a face parsed once and never unloaded.
func TestUnloadFacesWhileShaping(t *testing.T) {
	file := notoSans(t)
	lazy, steady := NewRegistry(), NewRegistry()
	face := NewLazyFace("NotoSans-Regular", file.Coverage, file.Bytes)
	b, err := file.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseFace("NotoSans-Regular", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := lazy.AddFamily("Noto Sans", face); err != nil {
		t.Fatal(err)
	}
	if err := steady.AddFamily("Noto Sans", parsed); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := []Span{{Text: fmt.Sprintf("Invoice %d Grüße", next.Add(1))}}
				got, want := lazy.LayoutSpans(s, 0, 0), steady.LayoutSpans(s, 0, 0)
				if len(got) != 1 || len(want) != 1 || got[0].Width != want[0].Width {
					t.Errorf("layout under unloads %+v, want %+v", got, want)
					return
				}
			}
		})
	}
	for range 20 {
		UnloadFaces()
		face.Advance(36)
	}
	close(stop)
	wg.Wait()
}
