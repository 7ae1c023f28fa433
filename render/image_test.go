package render

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// pngFile writes a w×h PNG row by row, so that a large one takes no memory
// worth measuring to make: colour type ct (0 grey, 2 RGB, 6 RGBA), depth 8
// or 16 bits a channel, Adam7-interlaced or not (Go's encoder writes
// neither 16-bit grey from NRGBA64 nor interlaced files). Rows after the
// first use the Up filter, so a flat image compresses to almost nothing.
func pngFile(w, h, depth, ct int, interlaced bool, pix func(x, y int) color.NRGBA64) []byte {
	var out bytes.Buffer
	out.Write(pngSignature)
	chunk := func(kind string, data []byte) {
		out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		body := append([]byte(kind), data...)
		out.Write(body)
		out.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(body)))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ilace := byte(0)
	if interlaced {
		ilace = 1
	}
	chunk("IHDR", append(ihdr, byte(depth), byte(ct), 0, 0, ilace))
	channels := map[int]int{0: 1, 2: 3, 6: 4}[ct]
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	// Adam7 passes: x and y of the first pixel, then the steps.
	passes := [][4]int{{0, 0, 1, 1}}
	if interlaced {
		passes = [][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	}
	for _, p := range passes {
		pw, ph := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
		if pw <= 0 || ph <= 0 {
			continue
		}
		raw := make([]byte, pw*channels*depth/8)
		prev := make([]byte, len(raw))
		row := make([]byte, 1+len(raw))
		for j := 0; j < ph; j++ {
			i := 0
			for k := 0; k < pw; k++ {
				c := pix(p[0]+k*p[2], p[1]+j*p[3])
				for _, v := range []uint16{c.R, c.G, c.B, c.A}[:max(channels, 1)] {
					if depth == 16 {
						binary.BigEndian.PutUint16(raw[i:], v)
						i += 2
					} else {
						raw[i] = uint8(v >> 8)
						i++
					}
				}
			}
			row[0] = 0
			if j > 0 {
				row[0] = 2 // Up: the difference from the row above
			}
			copy(row[1:], raw)
			if j > 0 {
				for i := range raw {
					row[1+i] -= prev[i]
				}
			}
			zw.Write(row)
			prev, raw = raw, prev
		}
	}
	zw.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// pngHead is a PNG of a header alone (no pixel data), with valid checksums:
// enough for every check that reads no more than the header.
func pngHead(w, h, depth, ct int, interlaced bool) []byte {
	b := pngFile(1, 1, depth, ct, interlaced, func(int, int) color.NRGBA64 { return color.NRGBA64{} })
	ihdr := b[12:29]
	binary.BigEndian.PutUint32(ihdr[4:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[8:], uint32(h))
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(ihdr))
	return append(b[:33:33], 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82)
}

func dataURI(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

var (
	bombOnce sync.Once
	bomb     []byte
)

// bombPNG is the image of issue 18: 5000×5000 pixels, 16-bit RGBA, one
// colour. About 270 KB to send; Go's decoder holds it in 200 MB, and an
// 8-bit copy for fpdf takes 100 MB more.
func bombPNG() []byte {
	bombOnce.Do(func() {
		bomb = pngFile(5000, 5000, 16, 6, false, func(int, int) color.NRGBA64 { return color.NRGBA64{0x1234, 0x5678, 0x9abc, 0xffff} })
	})
	return bomb
}

func imageSchema(src string) Definition {
	return schemaDef(`{"margins":{"top":10,"bottom":10,"left":10,"right":10},"sections":[{"id":"b","components":[{"type":"text","props":{"content":"before"}},{"type":"image","props":{"src":` + quote(src) + `,"width":100}}]}]}`)
}

const imageSrcPath = "schema.sections[0].components[1].props.src"

// allocated is what f allocates on the Go heap, all goroutines together.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Compile of the image bomb of issue 18 reads its header only: it used to
// decode and convert it, about 300 MB per call, with no memory gate.
func TestCompileReadsOnlyTheHeaderOfAnImageBomb(t *testing.T) {
	if raceEnabled {
		// One goroutine, and the bulk is encoding the 200-MB bomb in Go (86 s
		// of the race step at load 10). TestLiteralImageConcurrentRenders
		// covers the image cache under -race.
		t.Skip("encodes a 5000×5000 16-bit PNG in one goroutine; run without -race")
	}
	def := imageSchema(dataURI("image/png", bombPNG()))
	e := MustEngine(t)
	var err error
	n := allocated(func() { _, err = e.Compile(def) })
	if n > 8<<20 {
		t.Errorf("Compile allocated %d MB, want a few at most", n>>20)
	}
	for _, want := range []string{"5000×5000 pixels", "16 bits a channel", "572 MB", "memory budget of 256 MB", "JPEG", "scale it down"} {
		assertIssue(t, err, imageSrcPath, want)
	}
	t.Log(err)
}

// Images are refused at Compile by their header: the pixels, and what
// decoding and embedding them would take against a render's memory budget.
func TestCompileRefusesImagesByTheirHeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		png  []byte
		want []string // in the message; none: accepted
	}{
		{"too many pixels", pngHead(20000, 20000, 8, 6, false), []string{"20000×20000 pixels", "megapixels"}},
		{"16-bit RGBA, 16 MP", pngHead(4000, 4000, 16, 6, false), []string{"4000×4000 pixels", "16 bits a channel", "RGBA", "366 MB", "save it as an 8-bit PNG or a JPEG"}},
		{"8-bit RGBA, interlaced, 16 MP", pngHead(4000, 4000, 8, 6, true), []string{"interlaced", "366 MB", "non-interlaced"}},
		{"8-bit RGBA, 25 MP", pngHead(5000, 5000, 8, 6, false), []string{"5000×5000 pixels", "8 bits a channel", "286 MB", "scale it down to at most 22.3 megapixels", "JPEG"}},
		{"16-bit grey, 25 MP", pngHead(5000, 5000, 16, 0, false), []string{"grey", "16 bits", "429 MB"}},
		{"8-bit grey, 25 MP fits", pngHead(5000, 5000, 8, 0, false), nil},
		{"16-bit RGB, 9 MP fits", pngHead(3000, 3000, 16, 2, false), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MustEngine(t).Compile(imageSchema(dataURI("image/png", tc.png)))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Compile: %v, want the header accepted (its pixels are read when rendering)", err)
				}
				return
			}
			for _, want := range tc.want {
				assertIssue(t, err, imageSrcPath, want)
			}
		})
	}
}

// A file whose header is sound but whose pixels are broken passes Compile
// (the pixels are not read then) and fails the render with an error at the
// image, every time, never a crash.
func TestBrokenImageBodyFailsTheRender(t *testing.T) {
	two := func(x, y int) color.NRGBA64 { return color.NRGBA64{uint16(x * 4000), uint16(y * 4000), 0x8000, 0xffff} }
	for _, tc := range []struct {
		name string
		png  []byte
	}{
		{"8-bit", pngFile(20, 10, 8, 6, false, two)},
		{"16-bit", pngFile(20, 10, 16, 6, false, two)},
		{"interlaced", pngFile(20, 10, 8, 2, true, two)},
		{"no pixel data", pngHead(20, 10, 8, 6, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(tc.png)
			if i := bytes.Index(b, []byte("IDAT")); i > 0 {
				b[i+6] ^= 0xff // inside the deflate stream; the chunk's CRC no longer matches
			}
			tpl := MustCompile(t, imageSchema(dataURI("image/png", b)))
			for range 2 {
				_, err := tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{})
				assertExpressionError(t, err, imageSrcPath, "PNG image cannot be read")
			}
		})
	}
}

// A literal image is decoded by the first render that draws it, under that
// render's memory budget, and kept for the renders after it; until then a
// render reserves what decoding it takes.
func TestLiteralImageIsDecodedUnderTheRenderBudget(t *testing.T) {
	if raceEnabled {
		// One goroutine encoding, decoding and embedding a 3-megapixel image
		// three times (38 s of the race step at load 10);
		// TestLiteralImageConcurrentRenders decodes one from 8 goroutines.
		t.Skip("renders a 3-megapixel image in one goroutine; run without -race")
	}
	// 3 megapixels, 8-bit RGBA: 12 MB decoded, 24 MB for fpdf to embed.
	const decodeAndEmbed = 3_000_000 * (4 + 8)
	tpl := MustCompile(t, imageSchema(pngDataURI(t, 2000, 1500)))
	l := DefaultLimits()
	base := int64(l.Pages)*pageContentReserve + l.Bytes
	if got, want := tpl.reservationFor(PDF, nil, l), base+decodeAndEmbed; got != want {
		t.Errorf("reserves %d before the image is decoded, want %d", got, want)
	}
	_, err := tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{Limits: Limits{Memory: 32 << 20}})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMemory || le.Actual < decodeAndEmbed {
		t.Fatalf("render with a 32 MB budget: %v, want the memory limit", err)
	}
	var st Stats
	first := allocated(func() { st, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{}) })
	if err != nil || st.Memory < decodeAndEmbed {
		t.Fatalf("first render: %+v, %v; want the decoding counted", st, err)
	}
	if got, want := tpl.reservationFor(PDF, nil, l), base+max(2*l.Bytes, 3_000_000*8); got != want {
		t.Errorf("reserves %d once the image is decoded, want %d", got, want)
	}
	again := allocated(func() { st, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{}) })
	if err != nil || first-again < 10<<20 {
		t.Errorf("second render allocated %d MB, first %d MB: want the decoded image reused (%v)", again>>20, first>>20, err)
	}
}

// testImage is a two-colour picture: red on the left half, blue on the right.
func testImage(w int) func(x, y int) color.NRGBA64 {
	return func(x, y int) color.NRGBA64 {
		if x < w/2 {
			return color.NRGBA64{0xc800, 0x1e00, 0x1e00, 0xffff}
		}
		return color.NRGBA64{0x1e00, 0x1e00, 0xc800, 0xffff}
	}
}

// Every kind of image accepted before is still embedded, at its size, and
// drawn: PNG in 8 and 16 bits, interlaced or not, palette; JPEG baseline,
// progressive and CMYK.
func TestImageKindsRender(t *testing.T) {
	needTool(t, "pdfimages")
	file := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "images", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name, mime string
		data       []byte
		w, h       int
		colour     string // as pdfimages lists it
		drawn      bool   // the test picture: red left, blue right
	}{
		{"png 8-bit RGBA", "image/png", pngFile(60, 30, 8, 6, false, testImage(60)), 60, 30, "rgb", true},
		{"png 8-bit RGB", "image/png", pngFile(60, 30, 8, 2, false, testImage(60)), 60, 30, "rgb", true},
		{"png 16-bit RGBA", "image/png", pngFile(60, 30, 16, 6, false, testImage(60)), 60, 30, "rgb", true},
		{"png 16-bit RGB", "image/png", pngFile(60, 30, 16, 2, false, testImage(60)), 60, 30, "rgb", true},
		{"png 16-bit grey", "image/png", pngFile(60, 30, 16, 0, false, testImage(60)), 60, 30, "", false},
		{"png 8-bit RGBA interlaced", "image/png", pngFile(61, 29, 8, 6, true, testImage(61)), 61, 29, "rgb", true},
		{"png 16-bit RGB interlaced", "image/png", pngFile(61, 29, 16, 2, true, testImage(61)), 61, 29, "rgb", true},
		{"png palette interlaced (PngSuite)", "image/png", file("basn3p04-31i.png"), 31, 31, "", false},
		{"png RGB interlaced (Go testdata)", "image/png", file("benchRGB-interlace.png"), 256, 256, "rgb", false},
		{"jpeg progressive", "image/jpeg", file("video-001.progressive.jpeg"), 150, 103, "rgb", false},
		{"jpeg CMYK", "image/jpeg", file("video-001.cmyk.jpeg"), 150, 103, "cmyk", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := dataURI(tc.mime, tc.data)
			literal := MustCompile(t, imageSchema(src))
			dynamic := MustCompile(t, imageSchema("{{ logo }}"))
			for _, pdf := range [][]byte{MustRender(t, literal, nil, Options{}), MustRender(t, dynamic, map[string]any{"logo": src}, Options{})} {
				out, err := exec.Command("pdfimages", "-list", writeTemp(t, pdf)).CombinedOutput()
				if err != nil {
					t.Fatalf("pdfimages: %v: %s", err, out)
				}
				lines := nonEmptyLines(string(out))
				if len(lines) < 3 {
					t.Fatalf("no image embedded:\n%s", out)
				}
				f := strings.Fields(lines[2]) // page num type width height color …
				if got, want := f[3]+"x"+f[4], fmt.Sprintf("%dx%d", tc.w, tc.h); f[2] != "image" || got != want || (tc.colour != "" && f[5] != tc.colour) {
					t.Errorf("embedded %s, want a %s %s image:\n%s", lines[2], want, tc.colour, out)
				}
				if !tc.drawn {
					continue
				}
				// The image sits 10 mm from the top left, 100 mm wide.
				img := rasterize(t, pdf, 72)
				hmm := 100 * float64(tc.h) / float64(tc.w)
				at := func(xmm, ymm float64) color.RGBA {
					r, g, b, _ := img.At(int(xmm/25.4*72), int(ymm/25.4*72)).RGBA()
					return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
				}
				for _, p := range []struct {
					x    float64
					want color.RGBA
				}{{35, color.RGBA{0xc8, 0x1e, 0x1e, 255}}, {85, color.RGBA{0x1e, 0x1e, 0xc8, 255}}} {
					if got := at(p.x, 10+8+hmm/2); !nearColour(got, p.want) {
						t.Errorf("pixel at %v mm is %v, want %v", p.x, got, p.want)
					}
				}
			}
		})
	}
}

func nearColour(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return x-y < 12 || y-x < 12 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}

// Renders of one template share its literal image: many at once, the
// first of them decoding it (run with -race).
func TestLiteralImageConcurrentRenders(t *testing.T) {
	src := dataURI("image/png", pngFile(300, 200, 16, 6, true, testImage(300)))
	tpl := MustCompile(t, imageSchema(src))
	var wg sync.WaitGroup
	outs := make([][]byte, 8)
	errs := make([]error, len(outs))
	for i := range outs {
		wg.Go(func() {
			var buf bytes.Buffer
			_, errs[i] = tpl.Render(context.Background(), &buf, PDF, nil, Options{})
			outs[i] = buf.Bytes()
		})
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("render %d: %v", i, errs[i])
		}
		if !bytes.Equal(outs[i], outs[0]) {
			t.Errorf("render %d differs from render 0", i)
		}
	}
}

// An image bomb from a variable is refused before it is decoded too.
func TestImageBombFromAVariable(t *testing.T) {
	if raceEnabled {
		// As TestCompileReadsOnlyTheHeaderOfAnImageBomb: one goroutine, the
		// bulk is encoding the bomb.
		t.Skip("encodes a 5000×5000 16-bit PNG in one goroutine; run without -race")
	}
	tpl := MustCompile(t, imageSchema("{{ logo }}"))
	values, err := tpl.Values(map[string]any{"logo": dataURI("image/png", bombPNG())})
	if err != nil {
		t.Fatal(err)
	}
	n := allocated(func() { _, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, values, Options{}) })
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMemory {
		t.Errorf("render: %v, want the memory limit", err)
	}
	if n > 32<<20 {
		t.Errorf("render allocated %d MB", n>>20)
	}
}
