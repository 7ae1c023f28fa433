package scan

// Rows is a *sql.Rows or pgx.Rows: the caller closes it.
type Rows interface {
	Row
	Next() bool
	Err() error
}

// List reads every row with read, in order; no rows is an empty list, not
// nil (lists are JSON arrays).
func List[T any](rows Rows, read func(Row) (T, error)) ([]T, error) {
	list := []T{}
	for rows.Next() {
		v, err := read(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}

// ListUpTo reads at most limit rows with read, from a query asked for
// limit+1, and reports whether more followed.
func ListUpTo[T any](rows Rows, limit int, read func(Row) (T, error)) (list []T, more bool, err error) {
	list = []T{}
	for rows.Next() {
		if len(list) == limit {
			more = true
			break
		}
		v, err := read(rows)
		if err != nil {
			return nil, false, err
		}
		list = append(list, v)
	}
	return list, more, rows.Err()
}
