package postgres

import (
	"slices"
	"testing"
)

// TestParts: what this session built is listed done, the rest missing,
// and nothing is listed twice.
func TestParts(t *testing.T) {
	done := []string{"UserStore", "TokenStore", "SessionStore", "TeamStore", "InvitationStore", "KeyStore", "Queue", "AccountStore", "TwoFactorStore", "ActivityStore", "MetaGenerations", "TemplateStore", "AssetStore", "WebhookSchedule", "JobStore", "BatchStore", "UsageStore", "AnalyticsStore", "WebhookStore", "SigningCertificateStore", "DashboardStore",
		"RateWindows (rate-limit windows and login throttles, shared and swept)",
		"Secrets (the jwt, download and signing keys, created once for every replica)",
		"TaskLock (the janitor's retention pass on one replica at a time)"}
	seen := map[string]bool{}
	for _, p := range Parts() {
		if seen[p.Name] {
			t.Fatalf("%s listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.Done != slices.Contains(done, p.Name) {
			t.Errorf("%s: done=%v", p.Name, p.Done)
		}
	}
	if m := Missing(); slices.Contains(m, "Queue") || slices.Contains(m, "WebhookStore") {
		t.Fatalf("missing %v", m)
	}
}
