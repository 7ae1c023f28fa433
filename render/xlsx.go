package render

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// Spreadsheet layout.
const (
	// sampleRows is how many rows of a sheet are held back to fit the
	// column widths and find the header row to freeze; the rest stream.
	sampleRows = 1000
	// freezeWithin: the first table's header row is frozen when it is
	// among the first freezeWithin rows of its sheet.
	freezeWithin = 20
	// Column widths, in characters.
	minColumnWidth = 8
	maxColumnWidth = 80
	// textBudget bounds the text held in cells, as a multiple of the output
	// limit: text that much larger than the file may be cannot fit it.
	textBudget = 4
	// maxSheetName is Excel's limit on sheet names.
	maxSheetName = 31
)

// xcell is one spreadsheet cell before it is written.
type xcell struct {
	v       any // nil, string, float64, int, bool or time.Time; a formula's cached value
	style   xstyle
	fit     int          // display width in characters the column should fit; 0 ignores the cell
	formula *cellFormula // a formula, resolved where the sheet places the cell
	chart   *xlsxChart   // a chart whose table starts at this cell
}

// empty reports whether the cell writes nothing.
func (c xcell) empty() bool { return c.v == nil && c.formula == nil }

// xstyle is a cell style; equal styles share one excelize style id.
type xstyle struct {
	font         string // font family name; "" is the application's default
	bold, italic bool
	size         float64
	color        string // "RRGGBB"; "" is automatic
	numFmt       string
	header       bool
	total        bool // a total row: a rule above
	align        string
	wrap         bool // text over several lines
}

// rowSink receives spreadsheet rows: a sheet writes them, columns collect them.
type rowSink interface {
	row(r []xcell) error
	// header is a table's header row; a sheet may freeze the rows above it.
	header(r []xcell) error
	pageBreak() error
	// grouped writes a row at an outline level: 2 for the rows of a group,
	// 1 for its subtotal row.
	grouped(r []xcell, level int) error
	// filter asks for an autofilter on the header row written last, over
	// cols columns and the rows below it.
	filter(cols, rows int)
}

// xlsxWriter writes one workbook.
type xlsxWriter struct {
	*run
	t        *Template
	f        *excelize.File
	styles   map[xstyle]int
	names    map[string]bool // sheet names in use, lower case
	sheets   int
	rows     int
	text     int64 // bytes of text in cells
	sheet    *sheetWriter
	baseName string // the body section's sheet name, for sheets after page breaks
	parts    int    // sheets made from the current section
	// outlines holds the deepest outline level of each sheet that has
	// one, by the sheet's part name in the package.
	outlines map[string]int
}

// sheetWriter writes one sheet through a StreamWriter.
type sheetWriter struct {
	x          *xlsxWriter
	sw         *excelize.StreamWriter
	name       string          // the sheet's name
	part       string          // the sheet's part name in the package
	cells      []excelize.Cell // reused for every row
	vals       []any
	pending    []xrow
	started    bool
	n          int    // rows so far
	widths     []int  // widest fitted cell per column
	freeze     int    // row of the first table header, 0 for none
	headerRow  int    // row of the last header written, 0 for none
	titleRow   int    // row of the first header written: printed on every page
	autoFilter string // the autofilter's range, "" for none
	level      int    // deepest outline level
	bytes      int64  // estimated sheet XML held in memory
}

// xrow is a row held back before it is written.
type xrow struct {
	cells []xcell
	level int
}

func (t *Template) renderXLSX(ctx context.Context, w io.Writer, values map[string]any, limits Limits, info docInfo) (stats Stats, err error) {
	f := excelize.NewFile()
	f.SetZipWriter(fastZip)
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("render: closing workbook: %w", cerr)
		}
	}()
	stamp := info.created.UTC().Format(time.RFC3339)
	creator := info.author
	if creator == "" {
		creator = "Folio"
	}
	if err := f.SetDocProps(&excelize.DocProperties{Creator: creator, LastModifiedBy: creator, Title: info.title, Subject: info.subject,
		Keywords: info.keywords, Language: info.language, Created: stamp, Modified: stamp}); err != nil {
		return Stats{}, fmt.Errorf("render: workbook properties: %w", err)
	}
	x := &xlsxWriter{run: newRun(ctx, limits), t: t, f: f, styles: map[xstyle]int{}, names: map[string]bool{}, outlines: map[string]int{}}
	env := x.ev.env(values, 2)
	// A workbook has no pages: templates that read them see one.
	env["page"], env["pages"] = 1, 1
	for _, s := range t.body {
		name := s.name
		if strings.TrimSpace(name) == "" {
			name = s.id
		}
		if err := x.startSection(name); err != nil {
			return Stats{}, err
		}
		err := x.walk(s.components, env, func(c *component, env map[string]any) error {
			return x.layout(c, env, x.sheet)
		})
		if err != nil {
			return Stats{}, err
		}
		if err := x.sheet.finish(); err != nil {
			return Stats{}, err
		}
	}
	if x.sheets == 0 {
		if err := x.startSection("Sheet1"); err != nil {
			return Stats{}, err
		}
		if err := x.sheet.finish(); err != nil {
			return Stats{}, err
		}
	}
	buf := &limitedBuffer{max: limits.Bytes, mem: &x.mem}
	if err := f.Write(buf); err != nil {
		if buf.over {
			return x.stats(buf.n), newLimitError(LimitBytes, buf.n, limits.Bytes)
		}
		if buf.err != nil {
			return x.stats(buf.n), buf.err
		}
		return x.stats(0), fmt.Errorf("render: writing XLSX: %w", err)
	}
	if buf.over {
		return x.stats(buf.n), newLimitError(LimitBytes, buf.n, limits.Bytes)
	}
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	// The package is copied once more, into a fixed order.
	if err := x.mem.hold(int64(buf.Len())); err != nil {
		return x.stats(int64(buf.Len())), err
	}
	out, err := canonicalZip(buf.Bytes(), x.outlines)
	if err != nil {
		return Stats{}, fmt.Errorf("render: writing XLSX: %w", err)
	}
	if _, err := w.Write(out); err != nil {
		return Stats{}, err
	}
	return x.stats(int64(len(out))), nil
}

// stats are the figures of the workbook as far as it got.
func (x *xlsxWriter) stats(bytes int64) Stats {
	return Stats{Rows: x.rows, Sheets: x.sheets, Bytes: bytes, Memory: x.mem.peak}
}

// sheetMemory is the most sheet XML excelize keeps in memory per sheet:
// its StreamWriter moves the rest to a temporary file once 16 MB are
// buffered, and the buffer keeps its capacity.
const sheetMemory = 2 * excelize.StreamChunkSize

// rowBytes estimates the sheet XML of one row.
func rowBytes(r []xcell) int64 {
	n := int64(32)
	for _, c := range r {
		if c.empty() {
			continue
		}
		n += 40
		if s, ok := c.v.(string); ok {
			n += int64(len(s)) + int64(len(s))/8 // escapes
		} else if runs, ok := c.v.([]excelize.RichTextRun); ok {
			n += int64(len(runsText(runs)))*9/8 + 120*int64(len(runs)) // each run's font
		} else {
			n += 24
		}
	}
	return n
}

// canonicalZip rewrites a zip archive with its entries in a fixed order,
// copying the compressed data as it is. excelize writes streamed sheets in
// map order, so without this the same workbook could come out as
// different bytes. Sheets with outlines get their outline level recorded
// (outlines, by part name), which excelize's StreamWriter cannot write.
func canonicalZip(data []byte, outlines map[string]int) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	files := slices.Clone(zr.File)
	slices.SortStableFunc(files, func(a, b *zip.File) int {
		// [Content_Types].xml first, as Office writes it; then by name.
		const first = "[Content_Types].xml"
		switch {
		case a.Name == first:
			return -1
		case b.Name == first:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	var out bytes.Buffer
	out.Grow(len(data))
	zw := zip.NewWriter(&out)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	for _, f := range files {
		if f.Name == "[Content_Types].xml" {
			// Charts make excelize list image types in map order.
			if err := copyRewritten(zw, f, sortContentTypes); err != nil {
				return nil, err
			}
			continue
		}
		if level := outlines[f.Name]; level > 0 {
			if err := copyRewritten(zw, f, func(b []byte) []byte { return withOutlineLevel(b, level) }); err != nil {
				return nil, err
			}
			continue
		}
		raw, err := f.OpenRaw()
		if err != nil {
			return nil, err
		}
		dst, err := zw.CreateRaw(&f.FileHeader)
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(dst, raw); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// fastZip compresses the workbook at flate.BestSpeed: several times faster
// than the default level on sheet XML, for files a little larger.
// The document properties (docProps/core.xml, a few hundred bytes) are
// stored uncompressed: they hold the creation time, and a dry run must
// predict the size of a file made seconds later to the byte.
func fastZip(w io.Writer) excelize.ZipWriter {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	return storedProps{zw}
}

// storedProps is a zip writer that stores docProps/core.xml.
type storedProps struct{ *zip.Writer }

func (z storedProps) Create(name string) (io.Writer, error) {
	if name == "docProps/core.xml" {
		return z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	}
	return z.Writer.Create(name)
}

// startSection starts the sheet of a body section.
func (x *xlsxWriter) startSection(name string) error {
	x.baseName, x.parts = name, 0
	return x.newSheet()
}

// newSheet starts a sheet named after the current section; sheets after a
// page break are numbered "Name (2)", "Name (3)", ….
func (x *xlsxWriter) newSheet() error {
	if x.sheets+1 > x.limits.Sheets {
		return newLimitError(LimitSheets, int64(x.sheets+1), int64(x.limits.Sheets))
	}
	if err := x.ctx.Err(); err != nil {
		return err
	}
	x.parts++
	suffix := ""
	if x.parts > 1 {
		suffix = " (" + strconv.Itoa(x.parts) + ")"
	}
	name := x.uniqueName(x.baseName, suffix)
	if x.sheets == 0 {
		if err := x.f.SetSheetName("Sheet1", name); err != nil {
			return fmt.Errorf("render: naming sheet: %w", err)
		}
	} else if _, err := x.f.NewSheet(name); err != nil {
		return fmt.Errorf("render: adding sheet: %w", err)
	}
	// Set before the stream writer starts: it writes the sheet's
	// properties first.
	if err := x.printSetup(name); err != nil {
		return err
	}
	sw, err := x.f.NewStreamWriter(name)
	if err != nil {
		return fmt.Errorf("render: adding sheet: %w", err)
	}
	x.sheets++
	// excelize names the parts of new sheets by their position.
	x.sheet = &sheetWriter{x: x, sw: sw, name: name, part: "xl/worksheets/sheet" + strconv.Itoa(x.sheets) + ".xml"}
	return nil
}

// printSetup makes a sheet print the way the PDF does: the schema's page
// size and orientation, as wide as one page and as long as it takes.
func (x *xlsxWriter) printSetup(sheet string) error {
	size, orientation := 9, x.t.doc.orientation // 9: A4
	if x.t.doc.pageSize == "Letter" {
		size = 1
	}
	wide, tall, fit := 1, 0, true
	if err := x.f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Size: &size, Orientation: &orientation, FitToWidth: &wide, FitToHeight: &tall}); err != nil {
		return fmt.Errorf("render: page layout: %w", err)
	}
	if err := x.f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return fmt.Errorf("render: page layout: %w", err)
	}
	return nil
}

// uniqueName makes a valid sheet name from base plus suffix that no other
// sheet of the workbook uses.
func (x *xlsxWriter) uniqueName(base, suffix string) string {
	base = sanitizeSheetName(base)
	for n := 1; ; n++ {
		s := suffix
		if n > 1 {
			s += " " + strconv.Itoa(n)
		}
		name := truncateRunes(base, maxSheetName-utf8.RuneCountInString(s)) + s
		name = strings.Trim(name, "' ")
		if name == "" {
			name = "Sheet" + s
		}
		key := strings.ToLower(name)
		if !x.names[key] && key != "history" {
			x.names[key] = true
			return name
		}
	}
}

// sanitizeSheetName applies Excel's rules: no []:*?/\ and no control
// characters, not blank, not starting or ending with an apostrophe.
func sanitizeSheetName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case strings.ContainsRune(`[]:*?/\`, r):
			return '_'
		case r < 0x20 || r == 0x7f || r == utf8.RuneError || r >= 0xFFFE:
			return -1
		}
		return r
	}, s)
	s = strings.Trim(strings.TrimSpace(s), "'")
	if s == "" {
		return "Sheet"
	}
	return s
}

func truncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func (s *sheetWriter) row(r []xcell) error                { return s.add(r, false, 0) }
func (s *sheetWriter) header(r []xcell) error             { return s.add(r, true, 0) }
func (s *sheetWriter) grouped(r []xcell, level int) error { return s.add(r, false, level) }

// filter sets the sheet's autofilter (a sheet has one) on the header row
// written last, unless an earlier table has it.
func (s *sheetWriter) filter(cols, rows int) {
	if s.autoFilter != "" || s.headerRow == 0 || cols < 1 || rows < 1 {
		return
	}
	last, err := excelize.ColumnNumberToName(cols)
	if err != nil {
		return
	}
	s.autoFilter = "A" + strconv.Itoa(s.headerRow) + ":" + last + strconv.Itoa(s.headerRow+rows)
}

// pageBreak ends the sheet and continues on a new one.
func (s *sheetWriter) pageBreak() error {
	if s.n == 0 {
		return nil // nothing on this sheet yet: no empty sheet
	}
	if err := s.finish(); err != nil {
		return err
	}
	return s.x.newSheet()
}

// add checks a row against the limits and writes or holds it.
func (s *sheetWriter) add(r []xcell, header bool, level int) error {
	x := s.x
	x.rows++
	if x.rows > x.limits.Rows {
		return newLimitError(LimitRows, int64(x.rows), int64(x.limits.Rows))
	}
	if err := x.checkRow(r); err != nil {
		return err
	}
	s.n++
	if header {
		s.headerRow = s.n
		if s.titleRow == 0 {
			s.titleRow = s.n
		}
	}
	if header && s.freeze == 0 && s.n <= freezeWithin && !s.started {
		s.freeze = s.n
	}
	s.level = max(s.level, level)
	if s.started {
		return s.write(s.n, r, level)
	}
	for i, c := range r {
		if c.fit > 0 {
			for len(s.widths) <= i {
				s.widths = append(s.widths, 0)
			}
			s.widths[i] = max(s.widths[i], c.fit)
		}
	}
	s.pending = append(s.pending, xrow{r, level})
	if len(s.pending) >= sampleRows {
		return s.start()
	}
	return nil
}

// checkRow enforces the column, cell and text limits on one row.
func (x *xlsxWriter) checkRow(r []xcell) error {
	if len(r) > x.limits.Columns {
		return newLimitError(LimitColumns, int64(len(r)), int64(x.limits.Columns))
	}
	for _, c := range r {
		str, ok := c.v.(string)
		if runs, rich := c.v.([]excelize.RichTextRun); rich {
			str, ok = runsText(runs), true
		}
		if !ok {
			continue
		}
		if n := utf8.RuneCountInString(str); n > x.limits.CellChars {
			return newLimitError(LimitCellChars, int64(n), int64(x.limits.CellChars))
		}
		x.text += int64(len(str))
		if x.text > textBudget*x.limits.Bytes {
			return newLimitError(LimitBytes, x.text, x.limits.Bytes)
		}
	}
	return nil
}

// start fixes the column widths and frozen rows, then writes the held rows.
func (s *sheetWriter) start() error {
	s.started = true
	for i, w := range s.widths {
		if w == 0 {
			continue
		}
		width := float64(min(max(w+2, minColumnWidth), maxColumnWidth))
		if err := s.sw.SetColWidth(i+1, i+1, width); err != nil {
			return fmt.Errorf("render: column width: %w", err)
		}
	}
	if s.freeze > 0 {
		cell := "A" + strconv.Itoa(s.freeze+1)
		err := s.sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: s.freeze, TopLeftCell: cell, ActivePane: "bottomLeft",
			Selection: []excelize.Selection{{SQRef: cell, ActiveCell: cell, Pane: "bottomLeft"}}})
		if err != nil {
			return fmt.Errorf("render: freezing header: %w", err)
		}
	}
	for i, r := range s.pending {
		if err := s.write(i+1, r.cells, r.level); err != nil {
			return err
		}
	}
	s.pending = nil
	return nil
}

// write streams row n (from 1) at an outline level.
func (s *sheetWriter) write(n int, r []xcell, level int) error {
	if len(r) == 0 && level == 0 {
		return nil
	}
	if n&255 == 0 {
		if err := s.x.ctx.Err(); err != nil {
			return err
		}
	}
	if cap(s.cells) < len(r) {
		s.cells = make([]excelize.Cell, len(r))
		s.vals = make([]any, len(r))
	}
	vals := s.vals[:len(r)]
	for i, c := range r {
		vals[i] = nil
		if c.chart != nil {
			if err := s.x.addChart(s.name, i+1, n, c.chart); err != nil {
				return err
			}
		}
		if c.empty() {
			continue
		}
		id, err := s.x.styleID(c.style)
		if err != nil {
			return err
		}
		s.cells[i] = excelize.Cell{StyleID: id, Value: c.v}
		if c.formula != nil {
			s.cells[i].Formula = c.formula.resolve(i+1, n)
		}
		vals[i] = &s.cells[i]
	}
	if s.bytes < sheetMemory {
		n := min(rowBytes(r), sheetMemory-s.bytes)
		s.bytes += n
		if err := s.x.mem.hold(n); err != nil {
			return err
		}
	}
	var opts []excelize.RowOpts
	if level > 0 {
		opts = append(opts, excelize.RowOpts{OutlineLevel: level})
	}
	if err := s.sw.SetRow("A"+strconv.Itoa(n), vals, opts...); err != nil {
		return fmt.Errorf("render: writing row: %w", err)
	}
	return nil
}

// finish writes what is held and closes the sheet.
func (s *sheetWriter) finish() error {
	if !s.started {
		if err := s.start(); err != nil {
			return err
		}
	}
	if s.autoFilter != "" {
		// Set on the sheet excelize streams, before Flush writes it out.
		if err := s.x.f.AutoFilter(s.name, s.autoFilter, nil); err != nil {
			return fmt.Errorf("render: autofilter: %w", err)
		}
	}
	if s.level > 0 {
		s.x.outlines[s.part] = s.level
	}
	if s.titleRow > 0 {
		// The first table's header row is printed at the top of every page.
		ref := fmt.Sprintf("'%s'!$%d:$%d", strings.ReplaceAll(s.name, "'", "''"), s.titleRow, s.titleRow)
		if err := s.x.f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", RefersTo: ref, Scope: s.name}); err != nil {
			return fmt.Errorf("render: print titles: %w", err)
		}
	}
	if err := s.sw.Flush(); err != nil {
		return fmt.Errorf("render: writing sheet: %w", err)
	}
	return nil
}

// styleID returns the excelize style for st, creating it once.
func (x *xlsxWriter) styleID(st xstyle) (int, error) {
	if st == (xstyle{}) {
		return 0, nil
	}
	if id, ok := x.styles[st]; ok {
		return id, nil
	}
	style := &excelize.Style{}
	if st.bold || st.italic || st.size > 0 || st.color != "" || st.font != "" {
		style.Font = &excelize.Font{Family: st.font, Bold: st.bold, Italic: st.italic, Size: st.size, Color: st.color}
	}
	if st.numFmt != "" {
		f := st.numFmt
		style.CustomNumFmt = &f
	}
	if st.header {
		style.Fill = excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"EEEEEE"}}
		style.Border = []excelize.Border{{Type: "bottom", Color: "888888", Style: 1}}
	}
	if st.total {
		style.Border = append(style.Border, excelize.Border{Type: "top", Color: "888888", Style: 1})
	}
	if st.align != "" || st.wrap {
		style.Alignment = &excelize.Alignment{Horizontal: map[string]string{"C": "center", "R": "right"}[st.align], WrapText: st.wrap}
	}
	id, err := x.f.NewStyle(style)
	if err != nil {
		return 0, fmt.Errorf("render: cell style: %w", err)
	}
	x.styles[st] = id
	return id, nil
}

// withOutlineLevel records the outline level in a sheet's XML.
func withOutlineLevel(sheet []byte, level int) []byte {
	end := bytes.Index(sheet, []byte("<sheetData"))
	if end < 0 {
		return sheet
	}
	head := sheet[:end]
	attr := ` outlineLevelRow="` + strconv.Itoa(level) + `"`
	var out bytes.Buffer
	out.Grow(len(sheet) + 64)
	if i := bytes.Index(head, []byte("<sheetFormatPr")); i >= 0 {
		i += len("<sheetFormatPr")
		out.Write(sheet[:i])
		out.WriteString(attr)
		out.Write(sheet[i:])
		return out.Bytes()
	}
	at := end
	if i := bytes.Index(head, []byte("<cols>")); i >= 0 {
		at = i
	}
	out.Write(sheet[:at])
	out.WriteString(`<sheetFormatPr defaultRowHeight="15"` + attr + `/>`)
	out.Write(sheet[at:])
	return out.Bytes()
}
