package dashboard

import (
	"html/template"
	"net/url"
	"strings"

	"folio/app"
)

// accountPage serves GET /app/account: profile, password, two-factor and
// account deletion.
func (d *Dashboard) accountPage(c *call) error {
	return d.renderAccount(c, nil)
}

func (d *Dashboard) renderAccount(c *call, extra map[string]any) error {
	tf, err := d.Accounts.TwoFactorStatus(c.r.Context())
	if err != nil {
		return err
	}
	data := map[string]any{"TwoFactor": tf}
	// A setup waiting for its code shows again, the same secret and QR
	// code, whenever the page is opened: after a wrong code, a reload, or
	// a visit elsewhere. Only "Start over" replaces it.
	if tf.Pending {
		setup, err := d.Accounts.PendingTwoFactor(c.r.Context())
		if err != nil {
			return err
		}
		data["Setup"], data["QR"] = setup, qrURL(setup)
	}
	for k, v := range extra {
		data[k] = v
	}
	if codes, ok := data["BackupCodes"].([]string); ok {
		data["CodesFile"] = codesFile(c.User.Email, codes)
	}
	return d.render(c, "account", "Account", data)
}

// qrURL lets the page show the service's QR code, a data: URI of a PNG.
func qrURL(setup *app.TwoFactorSetup) template.URL {
	if !strings.HasPrefix(setup.QRCode, "data:image/png;base64,") {
		return ""
	}
	return template.URL(setup.QRCode)
}

// codesFile is the backup codes as a text file, for the download button (a
// data: URI: the codes are shown once and never kept in clear).
func codesFile(email string, codes []string) template.URL {
	text := "Folio backup codes for " + email + "\n" +
		"Each code works once, in place of a code from your authenticator app.\n\n" + strings.Join(codes, "\n") + "\n"
	return template.URL("data:text/plain;charset=utf-8," + url.PathEscape(text))
}

// accountProfile serves POST /app/account/profile: name, timezone, email
// (a new address is confirmed by mail first).
func (d *Dashboard) accountProfile(c *call) error {
	in := app.ProfileInput{Name: c.formPtr("name"), Timezone: c.formPtr("timezone"), Email: c.formPtr("email")}
	// The form always holds the address; sending the current one again would
	// cancel a pending change, so only a different address is sent.
	if in.Email != nil && strings.EqualFold(*in.Email, c.User.Email) {
		in.Email = nil
	}
	u, err := d.Accounts.UpdateProfile(c.r.Context(), in)
	msg := "Profile saved."
	if err == nil && u.PendingEmail != "" && in.Email != nil && strings.EqualFold(*in.Email, u.PendingEmail) {
		msg = "Profile saved. We sent a link to " + u.PendingEmail + "; the address changes once you open it."
	}
	return c.done(err, "/app/account", msg)
}

// accountPassword serves POST /app/account/password. Every other session
// (dashboard and API refresh tokens) ends; this browser gets a new session.
func (d *Dashboard) accountPassword(c *call) error {
	if c.r.PostFormValue("newPassword") != c.r.PostFormValue("confirmPassword") {
		return c.redirect("/app/account", "error", "The new passwords do not match.")
	}
	sess, err := d.Accounts.ChangePassword(c.r.Context(), app.ChangePasswordInput{
		CurrentPassword: c.r.PostFormValue("currentPassword"), NewPassword: c.r.PostFormValue("newPassword")})
	if err != nil {
		return c.done(err, "/app/account", "")
	}
	// The API token pair the service issues is not needed here.
	if err := d.Auth.Logout(c.r.Context(), sess.RefreshToken); err != nil {
		return err
	}
	st, err := d.Sessions.Renew(c.r.Context(), c.token, c.client())
	if err != nil {
		return err
	}
	c.startSession(st)
	return c.redirect("/app/account", "ok", "Password changed. Your other sessions are signed out.")
}

// accountResend serves POST /app/account/resend-verification. The link
// leads back to the page it was asked from (an invitation, say).
func (d *Dashboard) accountResend(c *call) error {
	back := backTo(c, "/app/account")
	next := ""
	if back != "/app/account" {
		next = back
	}
	err := d.Auth.ResendVerification(c.r.Context(), next)
	return c.done(err, back, "We sent a new verification link to "+c.User.Email+".")
}

// twoFactorEnable serves POST /app/account/2fa/enable: the QR code and the
// secret; two-factor is on after verify. A setup already waiting is shown
// again rather than replaced (its QR code may be scanned already), unless
// the form says restart ("Start over").
func (d *Dashboard) twoFactorEnable(c *call) error {
	if c.form("restart") == "" {
		if _, err := d.Accounts.PendingTwoFactor(c.r.Context()); err == nil {
			return d.renderAccount(c, nil)
		}
	}
	setup, err := d.Accounts.EnableTwoFactor(c.r.Context())
	if err != nil {
		return c.done(err, "/app/account", "")
	}
	// The backup codes of the start are not shown: new ones come with the
	// confirmation, so a setup started over never leaves codes behind.
	return d.renderAccount(c, map[string]any{"Setup": setup, "QR": qrURL(setup)})
}

// twoFactorVerify serves POST /app/account/2fa/verify: turns two-factor on
// and shows the backup codes, once, to copy or download. A wrong code
// comes back to the same setup.
func (d *Dashboard) twoFactorVerify(c *call) error {
	codes, err := d.Accounts.ConfirmTwoFactor(c.r.Context(), c.form("code"))
	if err != nil {
		return c.done(err, "/app/account#two-factor", "")
	}
	c.flash = &flash{Kind: "ok", Message: "Two-factor authentication is on. Logging in now asks for a code. Store your backup codes now: they are not shown again."}
	return d.renderAccount(c, map[string]any{"BackupCodes": codes})
}

// twoFactorDisable serves POST /app/account/2fa/disable (password).
func (d *Dashboard) twoFactorDisable(c *call) error {
	err := d.Accounts.DisableTwoFactor(c.r.Context(), app.PasswordInput{Password: c.r.PostFormValue("password")})
	return c.done(err, "/app/account", "Two-factor authentication is off.")
}

// twoFactorBackupCodes serves POST /app/account/2fa/backup-codes: new codes,
// shown once; the old ones stop working.
func (d *Dashboard) twoFactorBackupCodes(c *call) error {
	codes, err := d.Accounts.RegenerateBackupCodes(c.r.Context(), app.PasswordInput{Password: c.r.PostFormValue("password")})
	if err != nil {
		return c.done(err, "/app/account", "")
	}
	c.flash = &flash{Kind: "ok", Message: "New backup codes. Store them now: they are not shown again, and the old ones no longer work."}
	return d.renderAccount(c, map[string]any{"BackupCodes": codes})
}

// accountDelete serves POST /app/account/delete: pending deletion for 30
// days; every session ends.
func (d *Dashboard) accountDelete(c *call) error {
	if c.form("confirm") != "DELETE" {
		return c.redirect("/app/account", "error", "Type DELETE to confirm.")
	}
	del, err := d.Accounts.DeleteAccount(c.r.Context(), app.DeleteAccountInput{Password: c.r.PostFormValue("password"), Reason: c.form("reason")})
	if err != nil {
		return c.done(err, "/app/account", "")
	}
	if err := d.Sessions.EndAll(c.r.Context(), c.P.UserID); err != nil {
		return err
	}
	clearCookie(c.w, sessionCookie)
	c.rotateCSRF()
	return c.redirect("/app/login", "info", "Your account is scheduled for deletion on "+del.PurgeAt.Format("2 January 2006")+
		". Log in before then to restore it.")
}
