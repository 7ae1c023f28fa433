package app

import (
	"context"
	"time"
)

// Charge asks the store to pay for new jobs, in the transaction that records
// them: the monthly quota first, then credits (DESIGN.md section 6).
type Charge struct {
	TeamID string
	Month  string // YYYY-MM (UTC)
	Quota  int64  // documents per month of the team's plan; NoQuota when it has none
}

// NoQuota is the quota of a charge for a plan without a monthly quota:
// documents are still counted in the month's usage, never refused.
const NoQuota int64 = 1 << 53

// Usage counters of one team and month.
type UsageCounts struct {
	Documents   int64 // charged to the monthly quota
	CreditsUsed int64 // charged to credits
}

// UsageStore reads usage counters.
type UsageStore interface {
	FindUsage(ctx context.Context, teamID, month string) (UsageCounts, error)
}

// Month is the quota period of t: the calendar month in UTC.
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// ErrQuota builds the refusal for a request of n documents.
func ErrQuota(quota, used, credits, n int64) *Error {
	left := max(0, quota-used)
	if left == 0 && credits == 0 {
		return (&Error{Code: ECodeQuotaExceeded, Message: "monthly generation quota exceeded and no document credits left"}).
			WithInfo("quota", quota, "used", used, "credits", credits, "requested", n)
	}
	return (&Error{Code: ECodeNoCredits, Message: "not enough quota and document credits for this request"}).
		WithInfo("quota", quota, "used", used, "credits", credits, "requested", n, "available", left+credits)
}

// charge returns the charge for the caller's team this month.
func (s *DocumentService) charge(ctx context.Context, teamID string) (*Charge, Plan, error) {
	team, err := s.Teams.FindTeam(ctx, teamID)
	if err != nil {
		return nil, Plan{}, err
	}
	plan, err := FindPlan(team.Plan)
	if err != nil {
		return nil, Plan{}, err
	}
	quota := plan.DocumentsPerMonth
	if plan.Unlimited() {
		quota = NoQuota
	}
	return &Charge{TeamID: teamID, Month: Month(s.Now()), Quota: quota}, plan, nil
}

// Split divides n documents of charge c between the month's quota and
// credits, the quota first, given what the month used so far and the
// team's credits: ErrQuota when both together do not cover n. Both stores
// charge by it, under their lock on the team.
func (c *Charge) Split(used, credits, n int64) (fromQuota, fromCredits int64, err error) {
	left := max(0, c.Quota-used)
	if n > left+credits {
		return 0, 0, ErrQuota(c.Quota, used, credits, n)
	}
	fromQuota = min(n, left)
	return fromQuota, n - fromQuota, nil
}

// Covers reports whether c still covers n documents (ErrQuota when not),
// given the month's usage and the team's credits: CheckQuota's rule.
func (c *Charge) Covers(used, credits, n int64) error {
	_, _, err := c.Split(used, credits, n)
	return err
}
