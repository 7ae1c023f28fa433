package dashboard

import (
	"fmt"
	"time"

	"folio/app"
)

// home serves GET /app/: what the team has and what to do next.
func (d *Dashboard) home(c *call) error {
	ctx := c.r.Context()
	w, err := d.Analytics.Wallet(ctx)
	if err != nil {
		return err
	}
	jobs, _, err := d.Documents.FindJobs(ctx, app.JobFilter{Page: app.Page{Page: 1, Limit: 5}})
	if err != nil {
		return err
	}
	_, templates, err := d.Templates.FindTemplates(ctx, app.TemplateFilter{Page: app.Page{Page: 1, Limit: 1}})
	if err != nil {
		return err
	}
	data := map[string]any{"Wallet": w, "Jobs": jobs, "Names": d.templateNames(ctx, jobs), "TemplateCount": templates, "KeyCount": -1}
	if app.CanAdmin(c.P.Role) {
		_, keys, err := d.Keys.FindAPIKeys(ctx, app.KeyFilter{Page: app.Page{Page: 1, Limit: 1}})
		if err != nil {
			return err
		}
		data["KeyCount"] = keys
	}
	return d.render(c, "home", "Overview", data)
}

// usagePage serves GET /app/usage: plan, quota, credits, the queue, and
// documents per day over the last 30 days as an inline SVG chart.
func (d *Dashboard) usagePage(c *call) error {
	ctx := c.r.Context()
	w, err := d.Analytics.Wallet(ctx)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	from := now.AddDate(0, 0, -29).Truncate(24 * time.Hour)
	a, err := d.Analytics.Documents(ctx, from.Format(time.RFC3339), now.Format(time.RFC3339))
	if err != nil {
		return err
	}
	h, err := d.Analytics.Health(ctx)
	if err != nil {
		return err
	}
	data := map[string]any{"Wallet": w, "Docs": a, "Health": h, "Chart": dailyChart(a.ByDate, from, 30)}
	if d.Assets != nil {
		if st, err := d.Assets.Storage(ctx); err == nil {
			data["Storage"] = st
		}
	}
	return d.render(c, "usage", "Usage", data)
}

// chart is a bar chart laid out on the server: the view draws it as SVG.
type chart struct {
	Width, Height, Max int
	Bars               []bar
	Ticks              []tick
	Labels             []tick
	Empty              bool
}

type bar struct {
	X, Y, W, H float64
	Date       string
	Count      int
}

type tick struct {
	X, Y   float64
	Label  string
	Anchor string // SVG text-anchor
}

// dailyChart lays out one bar per day from from, zero days included.
func dailyChart(series []app.DateCount, from time.Time, days int) *chart {
	counts := map[string]int{}
	for _, dc := range series {
		counts[dc.Date] = dc.Count
	}
	const width, height, left, bottom, top = 960, 260, 40, 28, 10
	ch := &chart{Width: width, Height: height}
	for i := 0; i < days; i++ {
		ch.Max = max(ch.Max, counts[from.AddDate(0, 0, i).Format(time.DateOnly)])
	}
	ch.Empty = ch.Max == 0
	scale := niceMax(ch.Max)
	plotH := float64(height - bottom - top)
	slot := float64(width-left) / float64(days)
	for i := 0; i < days; i++ {
		day := from.AddDate(0, 0, i)
		n := counts[day.Format(time.DateOnly)]
		h := plotH * float64(n) / float64(scale)
		x := float64(left) + float64(i)*slot
		ch.Bars = append(ch.Bars, bar{X: x + slot*0.15, Y: float64(top) + plotH - h, W: slot * 0.7, H: h, Date: day.Format(time.DateOnly), Count: n})
		switch {
		case i == days-1:
			ch.Labels = append(ch.Labels, tick{X: x + slot, Y: float64(height - 8), Label: day.Format("Jan 2"), Anchor: "end"})
		case i%7 == 0 && days-1-i >= 4:
			ch.Labels = append(ch.Labels, tick{X: x + slot/2, Y: float64(height - 8), Label: day.Format("Jan 2"), Anchor: "middle"})
		}
	}
	for i := 0; i <= 4; i++ {
		v := scale * i / 4
		ch.Ticks = append(ch.Ticks, tick{X: float64(left - 6), Y: float64(top) + plotH - plotH*float64(i)/4, Label: fmt.Sprint(v), Anchor: "end"})
	}
	return ch
}

// niceMax rounds a maximum up to a value that divides into four even ticks.
func niceMax(n int) int {
	if n <= 4 {
		return 4
	}
	step := 1
	for step*4 < n {
		switch {
		case step*2*4 >= n:
			step *= 2
		case step*5*4 >= n:
			step *= 5
		default:
			step *= 10
		}
	}
	return step * 4
}
