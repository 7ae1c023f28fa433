package app

import (
	"context"
	"math"
	"sort"
	"time"
)

// AnalyticsFilter selects a team's jobs created in [From, To).
type AnalyticsFilter struct {
	TeamID     string
	TemplateID string
	From, To   time.Time
}

// AnalyticsRow is one (day, status, format) group of jobs.
type AnalyticsRow struct {
	Date          string // YYYY-MM-DD (UTC)
	Status        string
	Format        string
	Count         int
	DurationSumMS int64
	DurationCount int
}

// AnalyticsStore aggregates job records.
type AnalyticsStore interface {
	JobAnalytics(ctx context.Context, f AnalyticsFilter) ([]AnalyticsRow, error)
	// CountDocuments counts a team's completed documents in [from, to).
	CountDocuments(ctx context.Context, teamID string, from, to time.Time) (int64, error)
}

// DateCount is one point of a per-day series.
type DateCount struct {
	Date  string `json:"date"`
	Count int    `json:"count"`
}

// DocumentAnalytics carries every field of the spec's shapes A and B.
type DocumentAnalytics struct {
	TotalDocuments     int            `json:"totalDocuments"`
	CompletedDocuments int            `json:"completedDocuments"`
	FailedDocuments    int            `json:"failedDocuments"`
	ByFormat           map[string]int `json:"byFormat"`
	ByDate             []DateCount    `json:"byDate"`
	Summary            struct {
		TotalDocuments      int     `json:"totalDocuments"`
		SuccessfulDocuments int     `json:"successfulDocuments"`
		FailedDocuments     int     `json:"failedDocuments"`
		SuccessRate         float64 `json:"successRate"`
	} `json:"summary"`
	ByStatus map[string]int `json:"byStatus"`
	Period   struct {
		StartDate time.Time `json:"startDate"`
		EndDate   time.Time `json:"endDate"`
	} `json:"period"`
}

// AnalyticsService reports generation analytics from job records.
type AnalyticsService struct {
	Store     AnalyticsStore
	Counts    UsageStore
	Dash      DashboardStore
	Jobs      JobStore
	Templates TemplateStore
	Teams     TeamStore
	// Assets, when set, adds the asset storage to the usage.
	Assets AssetStore
	Now    func() time.Time
}

func (s *AnalyticsService) reader(ctx context.Context) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	return p, p.Require(PermAnalyticsRead)
}

// Period resolves startDate/endDate (ISO 8601 date or date-time) with a
// default window ending now. An end given as a bare date includes that day.
func Period(start, end string, def time.Duration, now time.Time) (time.Time, time.Time, error) {
	to := now.UTC()
	from := to.Add(-def)
	if end != "" {
		t, dateOnly, err := ParseTime(end)
		if err != nil {
			return from, to, ErrInvalid("endDate", "endDate must be an ISO 8601 date or date-time")
		}
		if dateOnly {
			t = t.AddDate(0, 0, 1)
		}
		to = t
		if start == "" {
			from = to.Add(-def)
		}
	}
	if start != "" {
		t, _, err := ParseTime(start)
		if err != nil {
			return from, to, ErrInvalid("startDate", "startDate must be an ISO 8601 date or date-time")
		}
		from = t
	}
	if !from.Before(to) {
		return from, to, ErrInvalid("startDate", "startDate must be before endDate")
	}
	return from, to, nil
}

// ParseTime reads an ISO 8601 date (YYYY-MM-DD) or RFC 3339 date-time.
func ParseTime(s string) (t time.Time, dateOnly bool, err error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true, nil
	}
	t, err = time.Parse(time.RFC3339Nano, s)
	return t.UTC(), false, err
}

// Documents answers GET /api/v1/documents/analytics.
func (s *AnalyticsService) Documents(ctx context.Context, start, end string) (*DocumentAnalytics, error) {
	p, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	from, to, err := Period(start, end, 30*24*time.Hour, s.Now())
	if err != nil {
		return nil, err
	}
	rows, err := s.Store.JobAnalytics(ctx, AnalyticsFilter{TeamID: p.TeamID, From: from, To: to})
	if err != nil {
		return nil, err
	}
	a := &DocumentAnalytics{ByFormat: map[string]int{"pdf": 0, "xlsx": 0}, ByStatus: map[string]int{"completed": 0, "failed": 0}, ByDate: []DateCount{}}
	byDate := map[string]int{}
	for _, r := range rows {
		a.TotalDocuments += r.Count
		a.ByFormat[r.Format] += r.Count
		byDate[r.Date] += r.Count
		switch r.Status {
		case StatusCompleted:
			a.CompletedDocuments += r.Count
		case StatusFailed:
			a.FailedDocuments += r.Count
		}
	}
	a.ByStatus["completed"], a.ByStatus["failed"] = a.CompletedDocuments, a.FailedDocuments
	a.ByDate = series(byDate)
	a.Summary.TotalDocuments, a.Summary.SuccessfulDocuments, a.Summary.FailedDocuments = a.TotalDocuments, a.CompletedDocuments, a.FailedDocuments
	a.Summary.SuccessRate = rate(a.CompletedDocuments, a.CompletedDocuments+a.FailedDocuments)
	a.Period.StartDate, a.Period.EndDate = from, to
	return a, nil
}

func series(m map[string]int) []DateCount {
	out := make([]DateCount, 0, len(m))
	for d, c := range m {
		out = append(out, DateCount{Date: d, Count: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Date < out[j].Date })
	return out
}

// rate is a percentage with one decimal; 100 when nothing ended.
func rate(ok, ended int) float64 {
	if ended == 0 {
		return 100
	}
	return math.Round(float64(ok)*1000/float64(ended)) / 10
}

// TemplateAnalytics is the answer of the template analytics endpoints.
type TemplateAnalytics struct {
	TemplateID   string   `json:"templateId"`
	TemplateName string   `json:"templateName"`
	Format       []string `json:"format"`
	Usage        struct {
		Total      int `json:"total"`
		Last7Days  int `json:"last7Days"`
		Last30Days int `json:"last30Days"`
	} `json:"usage"`
	Performance struct {
		SuccessRate         float64 `json:"successRate"`
		AvgGenerationTimeMs float64 `json:"avgGenerationTimeMs"`
		FailedCount         int     `json:"failedCount"`
	} `json:"performance"`
	Trend  []DateCount `json:"trend"`
	Period struct {
		StartDate time.Time `json:"startDate"`
		EndDate   time.Time `json:"endDate"`
	} `json:"period"`
}

var periods = map[string]time.Duration{"7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "90d": 90 * 24 * time.Hour, "1y": 365 * 24 * time.Hour}

// Template answers GET /api/templates/:id/analytics and its /api/v1 twin.
// usage.total, performance and trend cover the period (period=7d|30d|90d|1y,
// default 30d, or startDate/endDate); last7Days and last30Days end now.
func (s *AnalyticsService) Template(ctx context.Context, ref, period, start, end string) (*TemplateAnalytics, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.Kind == AuthKey {
		if err := p.Require(PermAnalyticsRead); err != nil {
			return nil, err
		}
	}
	if period == "" {
		period = "30d"
	}
	def, ok := periods[period]
	if !ok {
		return nil, ErrInvalid("period", "period must be 7d, 30d, 90d or 1y")
	}
	t, err := s.Templates.FindTemplate(ctx, p.TeamID, ref)
	if err != nil {
		return nil, templateNotFound(err, ref)
	}
	now := s.Now().UTC()
	from, to, err := Period(start, end, def, now)
	if err != nil {
		return nil, err
	}
	wide := from
	if d := now.Add(-30 * 24 * time.Hour); d.Before(wide) {
		wide = d
	}
	rows, err := s.Store.JobAnalytics(ctx, AnalyticsFilter{TeamID: p.TeamID, TemplateID: t.ID, From: wide, To: maxTime(to, now.Add(time.Second))})
	if err != nil {
		return nil, err
	}
	a := &TemplateAnalytics{TemplateID: t.ID, TemplateName: t.Name, Format: t.OutputFormats, Trend: []DateCount{}}
	a.Period.StartDate, a.Period.EndDate = from, to
	d7, d30 := now.Add(-7*24*time.Hour).Format(time.DateOnly), now.Add(-30*24*time.Hour).Format(time.DateOnly)
	fromDay, toDay := from.Format(time.DateOnly), to.Format(time.DateOnly)
	byDate := map[string]int{}
	var completed, failed, durCount int
	var durSum int64
	for _, r := range rows {
		if r.Date > d7 {
			a.Usage.Last7Days += r.Count
		}
		if r.Date > d30 {
			a.Usage.Last30Days += r.Count
		}
		if r.Date < fromDay || r.Date > toDay {
			continue
		}
		a.Usage.Total += r.Count
		byDate[r.Date] += r.Count
		switch r.Status {
		case StatusCompleted:
			completed += r.Count
			durSum += r.DurationSumMS
			durCount += r.DurationCount
		case StatusFailed:
			failed += r.Count
		}
	}
	a.Trend = series(byDate)
	a.Performance.FailedCount = failed
	a.Performance.SuccessRate = rate(completed, completed+failed)
	if durCount > 0 {
		a.Performance.AvgGenerationTimeMs = math.Round(float64(durSum)*10/float64(durCount)) / 10
	}
	return a, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Usage is the answer of GET /api/v1/analytics/usage: this calendar month (UTC).
type Usage struct {
	Period             string `json:"period"`
	DocumentsGenerated int64  `json:"documentsGenerated"`
	CreditsUsed        int64  `json:"creditsUsed"`
	CreditsRemaining   int64  `json:"creditsRemaining"`
	Quota              int64  `json:"quota"`
	// AssetStorage is the team's asset storage against its plan's.
	AssetStorage *AssetStorage `json:"assetStorage,omitempty"`
}

// Usage reports this month's generation against the plan's quota. Failed
// documents are refunded, so they do not count.
func (s *AnalyticsService) Usage(ctx context.Context) (*Usage, error) {
	p, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	team, err := s.Teams.FindTeam(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	plan, _ := FindPlan(team.Plan)
	month := Month(s.Now())
	u, err := s.Counts.FindUsage(ctx, p.TeamID, month)
	if err != nil {
		return nil, err
	}
	out := &Usage{Period: month, DocumentsGenerated: u.Documents + u.CreditsUsed, CreditsUsed: u.CreditsUsed,
		CreditsRemaining: team.Credits, Quota: plan.DocumentsPerMonth}
	if s.Assets != nil {
		used, n, err := s.Assets.AssetUsage(ctx, p.TeamID)
		if err != nil {
			return nil, err
		}
		out.AssetStorage = &AssetStorage{UsedBytes: used, Assets: n}
		if plan.AssetBytes > 0 {
			out.AssetStorage.LimitBytes = &plan.AssetBytes
		}
	}
	return out, nil
}
