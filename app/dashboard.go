package app

import (
	"context"
	"encoding/csv"
	"io"
	"sort"
	"strconv"
	"time"
)

// TemplateStat is one template's generation figures in a period.
type TemplateStat struct {
	TemplateID          string  `json:"templateId"`
	Name                string  `json:"name"`
	Count               int     `json:"count"`
	Failed              int     `json:"failed"`
	AvgGenerationTimeMs float64 `json:"avgGenerationTimeMs"`
}

// HourCount is the number of documents created in one hour of the day (UTC).
type HourCount struct {
	Hour  int `json:"hour"`
	Count int `json:"count"`
}

// DashboardStore aggregates what the dashboard analytics show.
type DashboardStore interface {
	TemplateStats(ctx context.Context, teamID string, from, to time.Time) ([]TemplateStat, error)
	HourCounts(ctx context.Context, teamID string, from, to time.Time) ([]HourCount, error)
	// DeliveryCounts counts a team's deliveries that ended since a time.
	DeliveryCounts(ctx context.Context, teamID string, since time.Time) (succeeded, failed int, err error)
}

// Wallet is GET /api/dashboard/analytics/wallet.
type Wallet struct {
	Plan   string `json:"plan"`
	Period string `json:"period"`
	Quota  struct {
		// Unlimited is set for a plan without a monthly quota; Limit and
		// Remaining are then 0 and DocumentsAvailable counts credits only.
		Unlimited bool  `json:"unlimited"`
		Limit     int64 `json:"limit"`
		Used      int64 `json:"used"`
		Remaining int64 `json:"remaining"`
	} `json:"quota"`
	Credits struct {
		Remaining      int64 `json:"remaining"`
		UsedThisPeriod int64 `json:"usedThisPeriod"`
	} `json:"credits"`
	DocumentsAvailable int64     `json:"documentsAvailable"`
	ResetsAt           time.Time `json:"resetsAt"`
	Limits             Plan      `json:"limits"`
}

// Wallet reports the plan, this month's quota use and the credits.
func (s *AnalyticsService) Wallet(ctx context.Context) (*Wallet, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	team, err := s.Teams.FindTeam(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	plan, _ := FindPlan(team.Plan)
	now := s.Now().UTC()
	u, err := s.Counts.FindUsage(ctx, p.TeamID, Month(now))
	if err != nil {
		return nil, err
	}
	w := &Wallet{Plan: team.Plan, Period: Month(now), Limits: plan}
	w.Quota.Unlimited = plan.Unlimited()
	w.Quota.Limit, w.Quota.Used = plan.DocumentsPerMonth, u.Documents
	w.Quota.Remaining = max(0, plan.DocumentsPerMonth-u.Documents)
	w.Credits.Remaining, w.Credits.UsedThisPeriod = team.Credits, u.CreditsUsed
	w.DocumentsAvailable = w.Quota.Remaining + team.Credits
	w.ResetsAt = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0)
	return w, nil
}

// Health is GET /api/dashboard/analytics/health: the last 24 hours.
type Health struct {
	QueueDepth              int     `json:"queueDepth"`
	Processing              int     `json:"processing"`
	OldestPendingAgeSeconds float64 `json:"oldestPendingAgeSeconds"`
	Documents24h            int     `json:"documents24h"`
	FailureRate             float64 `json:"failureRate"`
	Deliveries24h           int     `json:"webhookDeliveries24h"`
	WebhookFailureRate      float64 `json:"webhookFailureRate"`
	Status                  string  `json:"status"`
}

// Health reports the team's queue and failure rates.
func (s *AnalyticsService) Health(ctx context.Context) (*Health, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	q, err := s.Jobs.QueueCounts(ctx, p.TeamID, now)
	if err != nil {
		return nil, err
	}
	rows, err := s.Store.JobAnalytics(ctx, AnalyticsFilter{TeamID: p.TeamID, From: now.Add(-24 * time.Hour), To: now.Add(time.Second)})
	if err != nil {
		return nil, err
	}
	h := &Health{QueueDepth: q.Pending, Processing: q.Processing, OldestPendingAgeSeconds: q.OldestPendingAgeSeconds}
	failed, ended := 0, 0
	for _, r := range rows {
		h.Documents24h += r.Count
		if r.Status == StatusFailed {
			failed += r.Count
		}
		if r.Status == StatusFailed || r.Status == StatusCompleted {
			ended += r.Count
		}
	}
	h.FailureRate = 100 - rate(ended-failed, ended)
	ok, bad, err := s.Dash.DeliveryCounts(ctx, p.TeamID, now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	h.Deliveries24h = ok + bad
	h.WebhookFailureRate = 100 - rate(ok, ok+bad)
	h.Status = "healthy"
	if h.FailureRate > 10 || h.WebhookFailureRate > 10 || h.OldestPendingAgeSeconds > 60 {
		h.Status = "degraded"
	}
	return h, nil
}

// Insights is GET /api/dashboard/analytics/insights: the last 30 days.
type Insights struct {
	Period struct {
		StartDate time.Time `json:"startDate"`
		EndDate   time.Time `json:"endDate"`
	} `json:"period"`
	TopTemplates     []TemplateStat `json:"topTemplates"`
	SlowestTemplates []TemplateStat `json:"slowestTemplates"`
	BusiestHours     []HourCount    `json:"busiestHours"`
}

// Insights reports the most used and slowest templates and the busiest hours.
func (s *AnalyticsService) Insights(ctx context.Context) (*Insights, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	to := s.Now().UTC()
	from := to.Add(-30 * 24 * time.Hour)
	stats, err := s.Dash.TemplateStats(ctx, p.TeamID, from, to)
	if err != nil {
		return nil, err
	}
	hours, err := s.Dash.HourCounts(ctx, p.TeamID, from, to)
	if err != nil {
		return nil, err
	}
	in := &Insights{TopTemplates: top(stats, func(a, b TemplateStat) bool { return a.Count > b.Count }),
		SlowestTemplates: top(stats, func(a, b TemplateStat) bool { return a.AvgGenerationTimeMs > b.AvgGenerationTimeMs })}
	sort.SliceStable(hours, func(i, j int) bool { return hours[i].Count > hours[j].Count })
	in.BusiestHours = hours[:min(len(hours), 5)]
	in.Period.StartDate, in.Period.EndDate = from, to
	return in, nil
}

func top(stats []TemplateStat, less func(a, b TemplateStat) bool) []TemplateStat {
	out := append([]TemplateStat{}, stats...)
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out[:min(len(out), 5)]
}

// ExportDaily writes one CSV row per day of [start, end): date, total,
// completed, failed, pdf, xlsx.
func (s *AnalyticsService) ExportDaily(ctx context.Context, start, end string, w io.Writer) error {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	from, to, err := Period(start, end, 30*24*time.Hour, s.Now())
	if err != nil {
		return err
	}
	rows, err := s.Store.JobAnalytics(ctx, AnalyticsFilter{TeamID: p.TeamID, From: from, To: to})
	if err != nil {
		return err
	}
	type day struct{ total, completed, failed, pdf, xlsx int }
	days := map[string]*day{}
	for _, r := range rows {
		d := days[r.Date]
		if d == nil {
			d = &day{}
			days[r.Date] = d
		}
		d.total += r.Count
		switch r.Status {
		case StatusCompleted:
			d.completed += r.Count
		case StatusFailed:
			d.failed += r.Count
		}
		if r.Format == "xlsx" {
			d.xlsx += r.Count
		} else {
			d.pdf += r.Count
		}
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"date", "total", "completed", "failed", "pdf", "xlsx"})
	for t := from.Truncate(24 * time.Hour); t.Before(to); t = t.Add(24 * time.Hour) {
		d := days[t.Format(time.DateOnly)]
		if d == nil {
			d = &day{}
		}
		cw.Write([]string{t.Format(time.DateOnly), strconv.Itoa(d.total), strconv.Itoa(d.completed), strconv.Itoa(d.failed), strconv.Itoa(d.pdf), strconv.Itoa(d.xlsx)})
	}
	cw.Flush()
	return cw.Error()
}
