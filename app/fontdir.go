package app

import (
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-text/typesetting/font"
	ot "github.com/go-text/typesetting/font/opentype"

	"folio/render"
)

// An operator's fonts (folio serve --font-dir, --system-fonts) are font
// families every team's templates may choose with fontFamily. Start-up
// only indexes them: each file's name table says its family, weight and
// slant; a file is read, checked as an upload is, and parsed when a
// document first draws with it. A file that cannot be indexed or fails the
// check is logged and skipped (its characters come from the fallback
// chain), never a failed start or render.

// SystemFontDirs are the directories --system-fonts scans.
func SystemFontDirs() []string {
	dirs := []string{"/usr/share/fonts", "/usr/local/share/fonts"}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".fonts"), filepath.Join(home, ".local", "share", "fonts"))
	}
	return dirs
}

// maxOperatorFont bounds an operator's font file (a CJK collection holds
// several fonts of 10-20 MB).
const maxOperatorFont = 64 << 20

// maxOperatorFonts bounds the font files indexed.
const maxOperatorFonts = 20000

// OperatorFonts indexes the TTF, OTF, TTC and OTC files under dirs (and
// their subdirectories) as font families, skipping the families named in
// taken (the built-in ones win). Missing directories are skipped quietly
// (the system's differ by distribution); bad files are logged.
func OperatorFonts(dirs []string, taken []string, log *slog.Logger) []render.FontFamily {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	start := time.Now()
	type member struct {
		path  string
		index int
		desc  font.Description
	}
	var paths []string
	seen := map[string]bool{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path != dir || !os.IsNotExist(err) {
					log.Warn("font directory: cannot read", "path", path, "err", err)
				}
				return nil
			}
			if d.IsDir() || len(paths) >= maxOperatorFonts {
				return nil
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".ttf", ".otf", ".ttc", ".otc":
			default:
				return nil
			}
			if real, err := filepath.EvalSymlinks(path); err == nil {
				if seen[real] {
					return nil
				}
				seen[real] = true
			}
			paths = append(paths, path)
			return nil
		})
		if err != nil {
			log.Warn("font directory: cannot read", "path", dir, "err", err)
		}
	}
	// Reading the name tables is disk-bound on a cold start: a few
	// readers at once.
	descs := make([][]font.Description, len(paths))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				d, err := describeFontFile(paths[i])
				if err != nil {
					log.Warn("font skipped", "path", paths[i], "err", err)
				}
				descs[i] = d
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	var found []member
	for i, ds := range descs {
		for k, d := range ds {
			if d.Family != "" {
				found = append(found, member{paths[i], k, d})
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].path != found[j].path {
			return found[i].path < found[j].path
		}
		return found[i].index < found[j].index
	})
	skip := map[string]bool{}
	for _, n := range taken {
		skip[strings.ToLower(n)] = true
	}
	byName := map[string]*render.FontFamily{}
	var out []*render.FontFamily
	for _, m := range found {
		family := strings.TrimSpace(m.desc.Family)
		k := strings.ToLower(family)
		if skip[k] {
			continue
		}
		ff := byName[k]
		if ff == nil {
			ff = &render.FontFamily{Name: family}
			byName[k] = ff
			out = append(out, ff)
		}
		fi := &FontInfo{Family: family, Weight: int(m.desc.Aspect.Weight)}
		if m.desc.Aspect.Style == font.StyleItalic {
			fi.Style = "italic"
		}
		slot := fontSlot(fi)
		if ff.Lazy[slot] != nil {
			continue // the first file (by path) of a family and style is the one
		}
		path, index := m.path, m.index
		ff.Lazy[slot] = &render.FontFile{Name: psFontName(family, slot), Load: func() ([]byte, error) {
			data, err := loadOperatorFont(path, index)
			if err != nil {
				log.Warn("font skipped: its characters are drawn by the fallback fonts", "path", path, "index", index, "err", err)
			}
			return data, err
		}}
	}
	list := make([]render.FontFamily, len(out))
	for i, f := range out {
		list[i] = *f
	}
	log.Info("fonts indexed", "dirs", strings.Join(dirs, string(os.PathListSeparator)), "files", len(paths), "families", len(list),
		"ms", time.Since(start).Milliseconds())
	return list
}

// describeFontFile reads the family, weight and slant of each font in a
// file from its name and OS/2 tables, without reading the rest.
func describeFontFile(path string) (descs []font.Description, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable font: %v", r)
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > maxOperatorFont {
		return nil, fmt.Errorf("larger than %d MB", maxOperatorFont>>20)
	}
	lds, err := ot.NewLoaders(f)
	if err != nil {
		return nil, fmt.Errorf("not a font: %v", err)
	}
	for _, ld := range lds {
		d, _ := font.Describe(ld, nil)
		if !ld.HasTable(ot.MustNewTag("glyf")) && !ld.HasTable(ot.MustNewTag("CFF ")) {
			d.Family = "" // bitmap, colour-only or CFF2 fonts draw nothing here
		}
		descs = append(descs, d)
	}
	return descs, nil
}

// loadOperatorFont reads font index of a file and checks it as an upload
// is checked.
func loadOperatorFont(path string, index int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxOperatorFont+1))
	f.Close()
	if err != nil {
		return nil, err
	}
	if len(data) > maxOperatorFont {
		return nil, fmt.Errorf("larger than %d MB", maxOperatorFont>>20)
	}
	if data, err = render.CollectionFont(data, index); err != nil {
		return nil, err
	}
	if _, err := checkFont(data); err != nil {
		return nil, err
	}
	return data, nil
}
