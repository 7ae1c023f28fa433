package text

import (
	"strings"
	"testing"

	"folio/assets"
)

// sansRegistry is Noto Sans (four styles) and Noto Sans Mono.
func sansRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry()
	for _, ff := range assets.Fonts().Families {
		if ff.Name != "Noto Sans" && ff.Name != "Noto Sans Mono" {
			continue
		}
		var faces []*Face
		for i, file := range []*assets.FontFile{ff.Regular, ff.Bold, ff.Italic, ff.BoldItalic} {
			if file == nil {
				faces = append(faces, nil)
				continue
			}
			b, err := file.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseFace(ff.Name+string(rune('0'+i)), b)
			if err != nil {
				t.Fatal(err)
			}
			faces = append(faces, f)
		}
		if err := r.AddFamily(ff.Name, faces...); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.SetDefault("Noto Sans"); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLayoutSpans wraps a paragraph of three styles: lines break between
// words whatever their span, punctuation after a bold word stays with
// it, every run carries its span's tag and face, and "\n" starts a line.
func TestLayoutSpans(t *testing.T) {
	r := sansRegistry(t)
	spans := []Span{
		{Text: "Sales grew by ", Tag: 0},
		{Text: "twelve", Style: Bold, Tag: 1},
		{Text: ", see ", Tag: 2},
		{Text: "total()", Family: "Noto Sans Mono", Tag: 3},
		{Text: " today\nand tomorrow", Style: Italic, Tag: 4},
	}
	lines := r.LayoutSpans(spans, 9000, 0) // about 9 em: a few words a line
	var texts []string
	for _, l := range lines {
		texts = append(texts, l.Text)
		var w float32
		for _, run := range l.Runs {
			w += run.Width
			text := run.LogicalText()
			want := -1
			for _, sp := range spans {
				if strings.Contains(sp.Text, strings.TrimSpace(text)) && strings.TrimSpace(text) != "" {
					want = sp.Tag
					break
				}
			}
			if want >= 0 && run.Tag != want {
				t.Errorf("run %q has tag %d, want %d", text, run.Tag, want)
			}
			if run.Tag == 3 && !strings.Contains(run.Face.Name(), "Mono") {
				t.Errorf("code run %q in %s", text, run.Face.Name())
			}
			if run.Tag == 1 && !strings.Contains(run.Face.Name(), "Sans1") {
				t.Errorf("bold run %q in %s", text, run.Face.Name())
			}
		}
		if w > 9000 {
			t.Errorf("line %q is %.0f wide, more than 9000", l.Text, w)
		}
	}
	joined := strings.Join(texts, "|")
	if strings.Contains(joined, "|,") {
		t.Errorf("a comma starts a line: %s", joined)
	}
	if !strings.Contains(joined, "today|and tomorrow") {
		t.Errorf("\\n did not start a line: %s", joined)
	}
	if got := strings.Join(strings.Fields(strings.ReplaceAll(joined, "|", " ")), " "); got != "Sales grew by twelve, see total() today and tomorrow" {
		t.Errorf("words lost: %s", got)
	}
}
