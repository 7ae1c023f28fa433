package fpdf

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
)

// TestSameMetricsAsUpstream checks that the parser gives every rune the
// width, and the font the descriptor, that upstream fpdf v0.9.0's parser
// gave them: the hashes were computed with upstream's AddUTF8FontFromBytes,
// GetStringSymbolWidth and GetFontDesc (README.md says how). Different
// metrics would move text in every document.
func TestSameMetricsAsUpstream(t *testing.T) {
	for _, c := range []struct {
		name string
		ttf  []byte
		want string
	}{
		{"regular", goregular.TTF, "080aaef5c070dba3157334cf3b52686d815076dfd3c67bf3036fcc7f0b4668a1"},
		{"bold", gobold.TTF, "aa85a82251301cc7f67449477881fbdd8dfa59014fac97447ee6a7a07362593a"},
		{"italic", goitalic.TTF, "3121775cc4505f3786bc0f8e5a8731d9811ee48fc66d7c46e35e26c0b478be17"},
		{"bolditalic", gobolditalic.TTF, "3de152ab8e70793a8881bd3d8e48c245b98bd8e416b2cc554749ab83e79d0777"},
	} {
		if got := metricsHash(t, c.ttf); got != c.want {
			t.Errorf("%s: metrics hash %s, upstream %s", c.name, got, c.want)
		}
	}
}

func metricsHash(t *testing.T, ttf []byte) string {
	f := New("P", "mm", "A4", "")
	f.AddUTF8FontParsed("f", "", mustParse(t, ttf))
	f.SetFont("f", "", 10)
	h := sha256.New()
	for r := rune(1); r < 0xFFFF; r++ {
		fmt.Fprintf(h, "%d,", f.GetStringSymbolWidth(string(r)))
	}
	d := f.GetFontDesc("f", "")
	fmt.Fprintf(h, "%d %d %d %d %v %d %d %d", d.Ascent, d.Descent, d.CapHeight, d.Flags, d.FontBBox, d.ItalicAngle, d.StemV, d.MissingWidth)
	return fmt.Sprintf("%x", h.Sum(nil))
}
