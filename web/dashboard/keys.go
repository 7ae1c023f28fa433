package dashboard

import (
	"net/url"

	"folio/app"
)

// keyList serves GET /app/keys: the team's keys and the create form.
func (d *Dashboard) keyList(c *call) error {
	return d.renderKeys(c, nil)
}

func (d *Dashboard) renderKeys(c *call, created *app.APIKey) error {
	pg := pageOf(c, 20)
	keys, total, err := d.Keys.FindAPIKeys(c.r.Context(), app.KeyFilter{Page: pg})
	if err != nil {
		return err
	}
	return d.render(c, "keys", "API keys", map[string]any{"Keys": keys, "Pager": newPager(c, pg, total), "Created": created,
		"CanManage": app.CanAdmin(c.P.Role)})
}

// keyCreate serves POST /app/keys. The answer shows the plain key, once; it
// is not redirected so the key never travels in a cookie or a URL.
func (d *Dashboard) keyCreate(c *call) error {
	name := c.form("name")
	flags := keyFlags(c)
	k, err := d.Keys.CreateAPIKey(c.r.Context(), app.KeyInput{Name: &name, Permissions: &flags})
	if err != nil {
		return c.done(err, "/app/keys", "")
	}
	c.flash = &flash{Kind: "ok", Message: "API key “" + k.Name + "” created. Copy it now: it is not shown again."}
	return d.renderKeys(c, k)
}

func keyFlags(c *call) app.KeyFlags {
	b := func(name string) *bool { v := c.checked(name); return &v }
	return app.KeyFlags{SendEmails: b("send_emails"), ReadAnalytics: b("read_analytics"), ManageTemplates: b("manage_templates")}
}

// keyDetail serves GET /app/keys/{id}: usage and settings of one key.
func (d *Dashboard) keyDetail(c *call) error {
	id := c.r.PathValue("id")
	k, err := d.Keys.FindAPIKeyByID(c.r.Context(), id)
	if err != nil {
		return err
	}
	st, err := d.Keys.APIKeyStats(c.r.Context(), id)
	if err != nil {
		return err
	}
	return d.render(c, "keys_detail", k.Name, map[string]any{"K": k, "Stats": st, "CanManage": app.CanAdmin(c.P.Role)})
}

// keyUpdate serves POST /app/keys/{id}: rename and change permissions.
func (d *Dashboard) keyUpdate(c *call) error {
	id := c.r.PathValue("id")
	name := c.form("name")
	flags := keyFlags(c)
	_, err := d.Keys.UpdateAPIKey(c.r.Context(), id, app.KeyInput{Name: &name, Permissions: &flags})
	return c.done(err, "/app/keys/"+url.PathEscape(id), "Key updated.")
}

// keyRevoke serves POST /app/keys/{id}/revoke: the key stops working at once.
func (d *Dashboard) keyRevoke(c *call) error {
	k, err := d.Keys.RevokeAPIKey(c.r.Context(), c.r.PathValue("id"))
	msg := ""
	if err == nil {
		msg = "Key “" + k.Name + "” revoked. Requests with it are refused from now on."
	}
	return c.done(err, backTo(c, "/app/keys"), msg)
}

// keyActivate serves POST /app/keys/{id}/activate.
func (d *Dashboard) keyActivate(c *call) error {
	on := true
	k, err := d.Keys.UpdateAPIKey(c.r.Context(), c.r.PathValue("id"), app.KeyInput{IsActive: &on})
	msg := ""
	if err == nil {
		msg = "Key “" + k.Name + "” is active again."
	}
	return c.done(err, backTo(c, "/app/keys"), msg)
}

// keyDelete serves POST /app/keys/{id}/delete.
func (d *Dashboard) keyDelete(c *call) error {
	err := d.Keys.DeleteAPIKey(c.r.Context(), c.r.PathValue("id"))
	return c.done(err, "/app/keys", "Key deleted.")
}

// backTo is the form's "back" field when it is a dashboard path, else def.
func backTo(c *call, def string) string {
	if b := c.form("back"); b != "" && safeNext(b) == b {
		return b
	}
	return def
}
