package app

// Page is a 1-based page request. Limit is capped at MaxLimit.
type Page struct {
	Page  int
	Limit int
}

// Pagination defaults and bounds (SPEC.md conventions).
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// MaxCount is how many rows a list that grows with history (jobs,
// activity) counts for meta.total. Counting every row of a long history
// cost more than the page itself (issue 19); past MaxCount, total is a
// lower bound and meta.totalIsEstimate is true (docs/api.md, Lists).
const MaxCount = 10_000

// Offset returns the number of rows to skip.
func (p Page) Offset() int { return (p.Page - 1) * p.Limit }

// Meta is the list envelope's meta object.
type Meta struct {
	Total int `json:"total"`
	// TotalIsEstimate says Total is a lower bound: more than MaxCount rows
	// match. Omitted when Total is exact.
	TotalIsEstimate bool `json:"totalIsEstimate,omitempty"`
	Page            int  `json:"page"`
	Limit           int  `json:"limit"`
	TotalPages      int  `json:"totalPages"`
	HasNextPage     bool `json:"hasNextPage"`
	HasPreviousPage bool `json:"hasPreviousPage"`
	// NextCursor starts the next page where this one ends (the job list's
	// ?cursor=): a page found by its position in (createdAt, id) order
	// costs the same however deep it is. Omitted on the last page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// NewMeta computes the list meta for total rows.
func NewMeta(p Page, total int) Meta {
	pages := (total + p.Limit - 1) / p.Limit
	return Meta{Total: total, Page: p.Page, Limit: p.Limit, TotalPages: pages, HasNextPage: p.Page < pages, HasPreviousPage: p.Page > 1}
}

// ListInfo is what a store knows of a list beyond the rows of its page.
type ListInfo struct {
	Total    int    // matching rows, exact up to MaxCount
	Estimate bool   // more than MaxCount rows match: Total is a lower bound
	More     bool   // rows follow this page
	Next     string // cursor of the next page ("" when there is none or the list has no cursors)
	// FromCursor says the page started at a cursor, not at an offset.
	FromCursor bool
}

// Meta computes the list meta of a page of a list.
func (l ListInfo) Meta(p Page) Meta {
	m := NewMeta(p, l.Total)
	m.TotalIsEstimate, m.HasNextPage, m.NextCursor = l.Estimate, l.More, l.Next
	m.HasPreviousPage = m.HasPreviousPage || l.FromCursor
	if l.More {
		m.TotalPages = max(m.TotalPages, p.Page+1)
	}
	return m
}

// Counted settles Total after a page of n rows at offset was read: an
// estimated total is at least what the pages so far have shown.
func (info *ListInfo) Counted(offset, n int) {
	if !info.Estimate {
		return
	}
	seen := offset + n
	if info.More {
		seen++
	}
	info.Total = max(info.Total, seen)
}
