package scan

import (
	"time"

	"folio/app"
)

// The analytics roll-ups (SQLite 0008, 0012, 0019, 0022; PostgreSQL
// 0010) count a team's ended jobs by UTC hour (slot) and day of creation.
// Both backends keep the same tables and read them with the same union.

// StatsTables are an hourly and a daily counter table and the columns
// StatsUnion selects from them besides the day.
type StatsTables struct{ Hours, Days, Cols string }

var (
	// TemplateStats count by template, status and format (job_stats,
	// job_stats_daily).
	TemplateStats = StatsTables{"job_stats", "job_stats_daily", "template_id, status, format, count, duration_sum, duration_count"}
	// TeamStats count a whole team by status and format (job_team_hours,
	// job_team_days).
	TeamStats = StatsTables{"job_team_hours", "job_team_days", "status, format, count, duration_sum, duration_count"}
	// TemplateTotals count by template alone, failed ones beside
	// (job_template_hours, job_template_days).
	TemplateTotals = StatsTables{"job_template_hours", "job_template_days", "template_id, count, failed, duration_sum, duration_count"}
)

// StatsUnion selects the counters of a team's jobs created in [from, to)
// as rows (day, src.Cols...): whole UTC days from the daily table, the
// hours before the first and after the last whole day from the hourly
// one. Reading hours alone, a year was 8,760 rows per template, status
// and format. templateID ("": all) needs TemplateStats. arg adds a value
// to the query's arguments and returns its placeholder.
func StatsUnion(src StatsTables, teamID, templateID string, from, to time.Time, arg func(any) string) string {
	s0, s1 := Slot(from), SlotCeil(to)
	d0, d1 := (s0+23)/24, s1/24 // the whole days
	if d0 >= d1 {
		d0, d1 = s1/24, s1/24 // none: hours only
	}
	tpl := func() string {
		if templateID == "" {
			return ""
		}
		return ` AND template_id = ` + arg(templateID)
	}
	var q string
	for _, r := range [][2]int64{{s0, min(d0*24, s1)}, {max(d1*24, s0), s1}} {
		q += `SELECT slot / 24 AS day, ` + src.Cols + ` FROM ` + src.Hours + `
			WHERE team_id = ` + arg(teamID) + ` AND slot >= ` + arg(r[0]) + ` AND slot < ` + arg(r[1]) + tpl() + ` UNION ALL `
	}
	return q + `SELECT day, ` + src.Cols + ` FROM ` + src.Days + ` WHERE team_id = ` + arg(teamID) + ` AND day >= ` + arg(d0) +
		` AND day < ` + arg(d1) + tpl()
}

// Slot is the hour t is in, as the roll-ups count it.
func Slot(t time.Time) int64 { return t.UnixMilli() / 3600000 }

// SlotCeil is the first hour that starts at or after t.
func SlotCeil(t time.Time) int64 { return (t.UnixMilli() + 3599999) / 3600000 }

// CountArgs are an ended job's values for the roll-ups' one counting
// statement: team, hour of creation, template, status, format, duration
// and whether it has one.
func CountArgs(j *app.Job) []any {
	var dur, n int64
	if j.DurationMS != nil {
		dur, n = *j.DurationMS, 1
	}
	return []any{j.TeamID, Slot(j.CreatedAt), j.TemplateID, j.Status, j.Format, dur, n}
}

// AnalyticsRow reads (day, status, format, count, duration sum, duration
// count), the day as counted (Unix days).
func AnalyticsRow(row Row) (app.AnalyticsRow, error) {
	var r app.AnalyticsRow
	var day int64
	err := row.Scan(&day, &r.Status, &r.Format, &r.Count, &r.DurationSumMS, &r.DurationCount)
	r.Date = time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
	return r, err
}

// TemplateStat reads (template, name, count, failed, average duration).
func TemplateStat(row Row) (app.TemplateStat, error) {
	var s app.TemplateStat
	err := row.Scan(&s.TemplateID, &s.Name, &s.Count, &s.Failed, &s.AvgGenerationTimeMs)
	return s, err
}

// HourCount reads (hour of the day, count).
func HourCount(row Row) (app.HourCount, error) {
	var h app.HourCount
	err := row.Scan(&h.Hour, &h.Count)
	return h, err
}
