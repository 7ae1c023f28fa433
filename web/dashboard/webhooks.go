package dashboard

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"folio/app"
)

// webhookList serves GET /app/webhooks: subscriptions and the create form.
func (d *Dashboard) webhookList(c *call) error {
	return d.renderWebhooks(c, nil, nil)
}

func (d *Dashboard) renderWebhooks(c *call, created *app.Subscription, fail *app.Error) error {
	subs, err := d.Webhooks.FindSubscriptions(c.r.Context())
	if err != nil {
		return err
	}
	data := map[string]any{"Subs": subs, "Events": app.EventNames, "Created": created}
	if fail != nil {
		data["error"] = errorText(fail)
		data["URL"], data["Description"], data["Checked"] = c.form("url"), c.form("description"), c.r.PostForm["events"]
	}
	return d.render(c, "webhooks", "Webhooks", data)
}

// webhookCreate serves POST /app/webhooks. Like a new API key, the signing
// secret is shown once in the answer.
func (d *Dashboard) webhookCreate(c *call) error {
	u, desc := c.form("url"), c.form("description")
	events := c.r.PostForm["events"]
	if events == nil {
		events = []string{}
	}
	sub, err := d.Webhooks.CreateSubscription(c.r.Context(), app.SubscriptionInput{URL: &u, Description: &desc, Events: events})
	if err != nil {
		var e *app.Error
		if errors.As(err, &e) {
			return d.renderWebhooks(c, nil, e)
		}
		return err
	}
	c.flash = &flash{Kind: "ok", Message: "Subscription created. Copy the signing secret now: it is not shown again."}
	return d.renderWebhooks(c, sub, nil)
}

// webhookDetail serves GET /app/webhooks/{id}: the subscription and its
// most recent deliveries (?limit= shows more, up to 100).
func (d *Dashboard) webhookDetail(c *call) error {
	id := c.r.PathValue("id")
	sub, err := d.Webhooks.FindSubscription(c.r.Context(), id)
	if err != nil {
		return err
	}
	limit, _ := strconv.Atoi(c.r.URL.Query().Get("limit"))
	if limit < 1 || limit > 100 {
		limit = 25
	}
	dels, err := d.Webhooks.FindDeliveries(c.r.Context(), id, limit)
	if err != nil {
		return err
	}
	more := ""
	if len(dels) == limit && limit < 100 {
		more = fmt.Sprintf("/app/webhooks/%s?limit=%d", url.PathEscape(id), min(limit*2, 100))
	}
	return d.render(c, "webhooks_detail", "Webhook", map[string]any{"S": sub, "Deliveries": dels, "More": more})
}

// webhookEnabled serves POST /app/webhooks/{id}/enabled (enabled=true|false).
func (d *Dashboard) webhookEnabled(c *call) error {
	id := c.r.PathValue("id")
	on := c.form("enabled") == "true"
	_, err := d.Webhooks.UpdateSubscription(c.r.Context(), id, app.SubscriptionInput{Enabled: &on})
	msg := "Subscription disabled: events raised meanwhile are not delivered to it."
	if on {
		msg = "Subscription enabled."
	}
	return c.done(err, backTo(c, "/app/webhooks/"+url.PathEscape(id)), msg)
}

// webhookTest serves POST /app/webhooks/{id}/test: one test event, now.
func (d *Dashboard) webhookTest(c *call) error {
	id := c.r.PathValue("id")
	res, err := d.Webhooks.SendTest(c.r.Context(), id)
	back := "/app/webhooks/" + url.PathEscape(id)
	if err != nil {
		return c.done(err, back, "")
	}
	if !res.Success {
		return c.redirect(back, "error", "The test event was not accepted: "+res.Error)
	}
	return c.redirect(back, "ok", fmt.Sprintf("Test event delivered (%d ms).", res.ResponseTime))
}

// webhookDelete serves POST /app/webhooks/{id}/delete.
func (d *Dashboard) webhookDelete(c *call) error {
	err := d.Webhooks.DeleteSubscription(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return c.done(err, "/app/webhooks/"+url.PathEscape(c.r.PathValue("id")), "")
	}
	return c.redirect("/app/webhooks", "ok", "Subscription deleted.")
}

// deliveryRetry serves POST /app/webhooks/{id}/deliveries/{delivery}/retry.
func (d *Dashboard) deliveryRetry(c *call) error {
	id := c.r.PathValue("id")
	_, err := d.Webhooks.RetryDelivery(c.r.Context(), id, c.r.PathValue("delivery"))
	return c.done(err, "/app/webhooks/"+url.PathEscape(id), "Delivery scheduled again.")
}
