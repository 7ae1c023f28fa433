package dashboard

import (
	"bytes"
	"fmt"
	"html/template"

	"github.com/xuri/excelize/v2"
)

// The editor shows an XLSX preview in the page: the first sheet's cells as
// an HTML table, at most this many rows and columns.
const (
	tableRows = 200
	tableCols = 40
)

var tableView = template.Must(template.New("xlsx").Funcs(template.FuncMap{"add": func(a, b int) int { return a + b }}).Parse(`<div class="sheet-head"><strong>{{.Sheet}}</strong>
{{- with .Others}} <span class="muted small">· also in the workbook: {{range $i, $s := .}}{{if $i}}, {{end}}{{$s}}{{end}}</span>{{end}}</div>
<div class="sheet-scroll"><table class="sheet" id="xlsx-table">
<thead><tr><th></th>{{range .Letters}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range $i, $r := .Rows}}<tr><th>{{add $i 1}}</th>{{range $r}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table></div>
{{- if .Cut}}<p class="muted small">The first {{.ShownRows}} of {{.TotalRows}} rows{{if .CutCols}} and {{.ShownCols}} of {{.TotalCols}} columns{{end}}: download the file for the rest.</p>{{end}}`))

// xlsxTable renders the first sheet of a workbook as an HTML table: what the
// editor's preview pane shows for XLSX (the file itself stays a download).
func xlsxTable(doc []byte) ([]byte, error) {
	f, err := excelize.OpenReader(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("read the preview workbook: %w", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return []byte(`<p class="muted">The workbook has no sheets.</p>`), nil
	}
	rows, err := f.GetRows(sheets[0])
	if err != nil {
		return nil, fmt.Errorf("read sheet %s: %w", sheets[0], err)
	}
	data := struct {
		Sheet                                      string
		Others, Letters                            []string
		Rows                                       [][]string
		Cut, CutCols                               bool
		ShownRows, TotalRows, ShownCols, TotalCols int
	}{Sheet: sheets[0], Others: sheets[1:], TotalRows: len(rows)}
	for _, r := range rows {
		data.TotalCols = max(data.TotalCols, len(r))
	}
	data.ShownCols = min(data.TotalCols, tableCols)
	for i := 1; i <= data.ShownCols; i++ {
		name, _ := excelize.ColumnNumberToName(i)
		data.Letters = append(data.Letters, name)
	}
	for _, r := range rows[:min(len(rows), tableRows)] {
		cells := make([]string, data.ShownCols)
		copy(cells, r)
		data.Rows = append(data.Rows, cells)
	}
	data.ShownRows = len(data.Rows)
	data.CutCols = data.ShownCols < data.TotalCols
	data.Cut = data.ShownRows < data.TotalRows || data.CutCols
	var buf bytes.Buffer
	if err := tableView.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
