package postgres

import (
	"slices"
	"testing"
)

// TestParts: what this session built is listed done, the rest missing,
// and nothing is listed twice.
func TestParts(t *testing.T) {
	done := []string{"UserStore", "TokenStore", "SessionStore", "TeamStore", "InvitationStore", "KeyStore", "Queue", "AccountStore", "TwoFactorStore", "ActivityStore", "MetaGenerations", "TemplateStore", "AssetStore", "WebhookSchedule", "WebhookStore", "SigningCertificateStore", "JobStore", "BatchStore", "UsageStore", "AnalyticsStore", "DashboardStore"}
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
	if m := Missing(); len(m) != len(Parts())-len(done) || slices.Contains(m, "Queue") {
		t.Fatalf("missing %v", m)
	}
}
