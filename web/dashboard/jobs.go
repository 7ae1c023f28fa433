package dashboard

import (
	"context"
	"net/url"

	"folio/app"
)

// fragmentHeader marks an answer that is a part of a page, not a page.
const fragmentHeader = "X-Folio-Fragment"

// jobStatuses are the filter choices of the jobs page.
var jobStatuses = []string{app.StatusPending, app.StatusProcessing, app.StatusCompleted, app.StatusFailed}

// jobList serves GET /app/jobs?status=&page=: the team's jobs, newest
// first. With ?fragment=1 it renders only the table, which the page's
// script fetches to refresh itself.
func (d *Dashboard) jobList(c *call) error {
	pg := pageOf(c, 25)
	status := c.r.URL.Query().Get("status")
	jobs, info, err := d.Documents.FindJobs(c.r.Context(), app.JobFilter{Status: status, TemplateID: c.r.URL.Query().Get("template"), Page: pg})
	if err != nil {
		return err
	}
	data := map[string]any{"Jobs": jobs, "Status": status, "Statuses": jobStatuses, "Pager": listPager(c, pg, info),
		"Names": d.templateNames(c.r.Context(), jobs), "Refresh": c.r.URL.Query().Get("refresh") != "off"}
	block := "layout"
	if c.r.URL.Query().Get("fragment") == "1" {
		// The script replaces the table only with an answer carrying this
		// header; anything else (the login page after the session ended)
		// makes it reload the whole page instead.
		block = "jobtable"
		c.w.Header().Set(fragmentHeader, "jobtable")
	}
	return d.renderBlock(c, "jobs", block, "Jobs", data)
}

// templateNames names the templates of a page of jobs (deleted ones stay
// shown by id).
func (d *Dashboard) templateNames(ctx context.Context, jobs []*app.JobView) map[string]string {
	names := map[string]string{}
	for _, j := range jobs {
		if _, ok := names[j.TemplateID]; ok {
			continue
		}
		names[j.TemplateID] = j.TemplateID
		if t, err := d.Templates.FindTemplate(ctx, app.TemplateRef{ID: j.TemplateID}); err == nil {
			names[j.TemplateID] = t.Name
		}
	}
	return names
}

// jobDetail serves GET /app/jobs/{id}: status, download link, error.
func (d *Dashboard) jobDetail(c *call) error {
	j, err := d.Documents.JobDetails(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return err
	}
	// The key by name; a deleted key (or one this role cannot read) by id.
	keyName := ""
	if j.APIKeyID != "" {
		if k, err := d.Keys.FindAPIKeyByID(c.r.Context(), j.APIKeyID); err == nil {
			keyName = k.Name
		}
	}
	return d.render(c, "jobs_detail", "Job "+j.JobID, map[string]any{"J": j, "Names": d.templateNames(c.r.Context(), []*app.JobView{j.JobView}),
		"KeyName": keyName, "Active": j.Status == app.StatusPending || j.Status == app.StatusProcessing})
}

// jobRetry serves POST /app/jobs/{id}/retry.
func (d *Dashboard) jobRetry(c *call) error {
	id := c.r.PathValue("id")
	j, err := d.Documents.RetryJob(c.r.Context(), id)
	if err != nil {
		return c.done(err, "/app/jobs/"+url.PathEscape(id), "")
	}
	return c.redirect("/app/jobs/"+url.PathEscape(j.JobID), "ok", "Retrying: a new job was queued.")
}

// jobDelete serves POST /app/jobs/{id}/delete.
func (d *Dashboard) jobDelete(c *call) error {
	id := c.r.PathValue("id")
	if err := d.Documents.DeleteJob(c.r.Context(), id); err != nil {
		return c.done(err, "/app/jobs/"+url.PathEscape(id), "")
	}
	return c.redirect("/app/jobs", "ok", "Job and document deleted.")
}
