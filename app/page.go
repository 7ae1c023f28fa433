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

// Offset returns the number of rows to skip.
func (p Page) Offset() int { return (p.Page - 1) * p.Limit }

// Meta is the list envelope's meta object.
type Meta struct {
	Total           int  `json:"total"`
	Page            int  `json:"page"`
	Limit           int  `json:"limit"`
	TotalPages      int  `json:"totalPages"`
	HasNextPage     bool `json:"hasNextPage"`
	HasPreviousPage bool `json:"hasPreviousPage"`
}

// NewMeta computes the list meta for total rows.
func NewMeta(p Page, total int) Meta {
	pages := (total + p.Limit - 1) / p.Limit
	return Meta{Total: total, Page: p.Page, Limit: p.Limit, TotalPages: pages, HasNextPage: p.Page < pages, HasPreviousPage: p.Page > 1}
}
