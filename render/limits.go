package render

import (
	"fmt"
	"time"
)

// Limits are the generation limits a render must stay within. A zero field
// takes its value from DefaultLimits.
type Limits struct {
	Pages            int   // PDF pages
	Images           int   // PDF images
	Rows             int   // spreadsheet rows per workbook
	Columns          int   // spreadsheet columns per sheet
	Sheets           int   // sheets per workbook
	CellChars        int   // characters per spreadsheet cell
	Components       int   // components per template
	Variables        int   // declared and calculated variables per template
	LoopIterations   int   // "each" iterations per document, all loops together
	NestingDepth     int   // component nesting levels
	LoopDepth        int   // nested "each" levels
	ConditionalDepth int   // nested "if" levels
	Operations       int   // AST nodes per expression ("formula complexity")
	Bytes            int64 // output file size
	// Memory is the memory budget of one render in bytes: decoded and
	// embedded images, PDF page content, sheet data held in memory and the
	// output file together (an estimate of what dominates, see memory.go).
	Memory int64
	// PDFTimeout and XLSXTimeout bound one render; Render returns
	// context.DeadlineExceeded when they pass.
	PDFTimeout  time.Duration
	XLSXTimeout time.Duration
}

// DefaultLimits returns the generation limits of the specification.
func DefaultLimits() Limits {
	return Limits{
		Pages:            30,
		Images:           50,
		Rows:             10000,
		Columns:          50,
		Sheets:           10,
		CellChars:        32767,
		Components:       500,
		Variables:        500,
		LoopIterations:   1000,
		NestingDepth:     10,
		LoopDepth:        3,
		ConditionalDepth: 5,
		Operations:       1000,
		Bytes:            10 << 20,
		Memory:           DefaultMemory,
		PDFTimeout:       60 * time.Second,
		XLSXTimeout:      120 * time.Second,
	}
}

// WithDefaults fills every zero or negative field from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.Pages, d.Pages)
	pick(&l.Images, d.Images)
	pick(&l.Rows, d.Rows)
	pick(&l.Columns, d.Columns)
	pick(&l.Sheets, d.Sheets)
	pick(&l.CellChars, d.CellChars)
	pick(&l.Components, d.Components)
	pick(&l.Variables, d.Variables)
	pick(&l.LoopIterations, d.LoopIterations)
	pick(&l.NestingDepth, d.NestingDepth)
	pick(&l.LoopDepth, d.LoopDepth)
	pick(&l.ConditionalDepth, d.ConditionalDepth)
	pick(&l.Operations, d.Operations)
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.PDFTimeout <= 0 {
		l.PDFTimeout = d.PDFTimeout
	}
	if l.XLSXTimeout <= 0 {
		l.XLSXTimeout = d.XLSXTimeout
	}
	return l
}

// runtimeOperations is the operation budget of one expression evaluation:
// the per-expression complexity for each element of the largest loop allowed.
// It stops runaway expressions (a reduce doubling a string, say) early.
func (l Limits) runtimeOperations() int {
	return l.Operations * l.LoopIterations
}

// expressionMemory is the byte budget of one expression evaluation.
func (l Limits) expressionMemory() int64 {
	return max(l.Memory/4, 1<<20)
}

// Options tune one render.
type Options struct {
	Limits Limits // zero value means DefaultLimits()
	// Created is the creation date written into the document's metadata.
	// render has no clock: the caller passes it, and a zero value writes a
	// fixed date (2000-01-01), which keeps output reproducible.
	Created time.Time
	// Title and Author are the document's properties (PDF Title and
	// Author, XLSX title and creator); the schema's "metadata" wins.
	Title, Author string
	// Interactive marks a render someone waits for without a job (a
	// preview, a dry run): it waits for memory in the smaller share of the
	// engine's pool interactive renders may hold, after any waiting job
	// (see Engine.SetMemory).
	Interactive bool
	// MemoryWait bounds how long Render waits for its memory reservation
	// before it fails with ErrBusy; 0 waits as long as ctx allows. The
	// render's timeout (Limits.PDFTimeout, XLSXTimeout) starts after it.
	MemoryWait time.Duration
	// Assets resolves image sources "asset:<ref>" (nil: a template naming
	// an asset fails to render, saying so).
	Assets AssetResolver
	// RequestAssets resolves the asset references a request sends itself
	// (attachBefore and attachAfter of PDFOptions): the requesting team's
	// assets, where Assets are the template owner's. nil: Assets.
	RequestAssets AssetResolver
	// Fetch fetches image sources that are https:// URLs (nil: a template
	// drawing one fails to render, saying so). render never reaches the
	// network itself: the caller guards addresses, time and size.
	Fetch ImageFetcher
	// PDF are a request's business PDF options (ParsePDFOptions): pdfa,
	// watermark, encrypt, documentMetadata, over the schema's.
	PDF PDFOptions
}

// Stats describes a finished document.
type Stats struct {
	Pages int // PDF pages, attached ones included
	// AttachedPagesBefore and AttachedPagesAfter are the pages of
	// attachBefore and attachAfter among Pages.
	AttachedPagesBefore, AttachedPagesAfter int
	Images                                  int   // distinct images, QR codes and barcodes embedded in a PDF
	Rows                                    int   // spreadsheet rows over all sheets
	Sheets                                  int   // spreadsheet sheets
	Bytes                                   int64 // size of the output
	// Memory is the most the render held against Limits.Memory at once.
	Memory int64
	// PagesUnsettled is set when a PDF whose layout depends on its own page
	// count ("pages" in a condition or a larger expression, a section "on"
	// the last page) still changed its count after the last layout pass:
	// the document keeps that layout, and what it shows of "pages" may be
	// off by the change.
	PagesUnsettled bool
}

// Limit names used in LimitError.Limit.
const (
	LimitPages            = "pages"
	LimitImages           = "images"
	LimitRows             = "rows"
	LimitSheets           = "sheets"
	LimitColumns          = "columns"
	LimitCellChars        = "cellChars"
	LimitBytes            = "bytes"
	LimitLoopIterations   = "loopIterations"
	LimitNestingDepth     = "nestingDepth"
	LimitLoopDepth        = "loopDepth"
	LimitConditionalDepth = "conditionalDepth"
	LimitComponents       = "components"
	LimitVariables        = "variables"
	LimitMemory           = "memory"
	// LimitExpressionMemory is the bytes one expression evaluation may
	// make (a quarter of Memory): strings and collections counted as they
	// are made, so that a small template cannot fill the heap.
	LimitExpressionMemory = "expressionMemory"
)

// limitInfo maps a limit name to its error code and message pattern.
var limitInfo = map[string]struct{ code, format string }{
	LimitPages:            {"ERR_LIMIT_001", "PDF page limit exceeded: %d pages, maximum %d"},
	LimitImages:           {"ERR_LIMIT_002", "PDF image limit exceeded: %d images, maximum %d"},
	LimitRows:             {"ERR_LIMIT_003", "spreadsheet row limit exceeded: %d rows, maximum %d"},
	LimitSheets:           {"ERR_LIMIT_004", "spreadsheet sheet limit exceeded: %d sheets, maximum %d"},
	LimitColumns:          {"ERR_LIMIT_005", "spreadsheet column limit exceeded: %d columns, maximum %d"},
	LimitCellChars:        {"ERR_LIMIT_016", "spreadsheet cell content exceeded: %d characters, maximum %d"},
	LimitBytes:            {"ERR_LIMIT_006", "generated file size exceeded: %d bytes, maximum %d"},
	LimitLoopIterations:   {"ERR_LIMIT_007", "loop iteration limit exceeded: %d iterations, maximum %d"},
	LimitNestingDepth:     {"ERR_LIMIT_008", "nesting depth exceeded: %d levels, maximum %d"},
	LimitLoopDepth:        {"ERR_LIMIT_008", "nested loop depth exceeded: %d levels, maximum %d"},
	LimitConditionalDepth: {"ERR_LIMIT_008", "conditional nesting exceeded: %d levels, maximum %d"},
	LimitComponents:       {"ERR_LIMIT_009", "component count exceeded: %d components, maximum %d"},
	LimitVariables:        {"ERR_LIMIT_018", "variables per template exceeded: %d variables, maximum %d"},
	LimitMemory:           {"ERR_LIMIT_017", "render memory budget exceeded: %d bytes, maximum %d"},
	LimitExpressionMemory: {"ERR_LIMIT_017", "expression memory budget exceeded: one expression made %d bytes of text and collections, maximum %d"},
}

// LimitError is returned when a generation limit is exceeded; work stops at once.
type LimitError struct {
	Code   string // ERR_LIMIT_001 … ERR_LIMIT_009, ERR_LIMIT_016 for cell content, ERR_LIMIT_017 for memory, ERR_LIMIT_018 for variables
	Limit  string // one of the Limit… names, e.g. LimitPages
	Actual int64  // the value reached when work stopped (at least Max+1)
	Max    int64
}

// Error says which limit was exceeded, e.g. "PDF page limit exceeded: 31 pages, maximum 30".
func (e *LimitError) Error() string {
	if info, ok := limitInfo[e.Limit]; ok {
		return fmt.Sprintf(info.format, e.Actual, e.Max)
	}
	return fmt.Sprintf("%s limit exceeded: %d, maximum %d", e.Limit, e.Actual, e.Max)
}

func newLimitError(limit string, actual, max int64) *LimitError {
	return &LimitError{Code: limitInfo[limit].code, Limit: limit, Actual: actual, Max: max}
}
