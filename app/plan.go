package app

import (
	"fmt"
	"time"
)

// Plan is a team's subscription tier and its quotas (SPEC.md, Plan quotas).
// A zero count means unlimited; so does a zero DocumentsPerMonth (the
// unlimited plan: no monthly quota at all).
type Plan struct {
	Name              string `json:"name"`
	DocumentsPerMonth int64  `json:"documentsPerMonth"`
	Templates         int    `json:"templates"`
	Members           int    `json:"members"`
	APIKeys           int    `json:"apiKeys"`
	BatchSize         int    `json:"batchSize"`
	// AssetBytes is the asset storage (SPEC.md: 100 MB ... 10 GB, in
	// binary units); 0 is none.
	AssetBytes    int64         `json:"assetBytes"`
	FileRetention time.Duration `json:"-"`
}

// Plans lists the plans by name.
var Plans = map[string]Plan{
	"free":    {Name: "free", DocumentsPerMonth: 50, Templates: 2, Members: 1, APIKeys: 1, BatchSize: 10, AssetBytes: 100 << 20, FileRetention: 24 * time.Hour},
	"starter": {Name: "starter", DocumentsPerMonth: 500, Templates: 5, Members: 3, APIKeys: 3, BatchSize: 100, AssetBytes: 500 << 20, FileRetention: 24 * time.Hour},
	"growth":  {Name: "growth", DocumentsPerMonth: 2500, Templates: 20, Members: 10, APIKeys: 10, BatchSize: 100, AssetBytes: 2 << 30, FileRetention: 72 * time.Hour},
	"scale":   {Name: "scale", DocumentsPerMonth: 10000, Templates: 50, BatchSize: 100, AssetBytes: 10 << 30, FileRetention: 72 * time.Hour},
	// unlimited is the default of a self-hosted install (--default-plan):
	// no monthly quota, no count caps; an operator of a public service
	// sets --default-plan free.
	PlanUnlimited: {Name: PlanUnlimited, BatchSize: 100, FileRetention: 7 * 24 * time.Hour},
}

// PlanUnlimited is the plan without quotas, the default for new teams.
const PlanUnlimited = "unlimited"

// PlanNames lists the plans, most limited first, for messages and flags.
const PlanNames = "free, starter, growth, scale or unlimited"

// Unlimited reports whether the plan has no monthly document quota.
func (p Plan) Unlimited() bool { return p.DocumentsPerMonth == 0 }

// FindPlan returns the named plan or ERR_PLAN_001.
func FindPlan(name string) (Plan, error) {
	p, ok := Plans[name]
	if !ok {
		return Plan{}, Errorf(ECodeUnknownPlan, "unknown plan %q (%s)", name, PlanNames)
	}
	return p, nil
}

// Resources a plan counts (relatedInfo.resource of ERR_PLAN_002).
const (
	ResourceTemplates = "templates"
	ResourceAPIKeys   = "apiKeys"
	ResourceMembers   = "members"
)

// CheckCount refuses one more of resource (ERR_PLAN_002) when a team on the
// plan already has current of them. The store calls it in the transaction
// that inserts the new one, so concurrent creates cannot both pass.
func (p Plan) CheckCount(resource string, current int) error {
	var limit int
	var what, remedy string
	switch resource {
	case ResourceTemplates:
		limit, remedy = p.Templates, "; delete one or change plan"
		what = Plural(int64(limit), "template")
	case ResourceAPIKeys:
		limit, remedy = p.APIKeys, "; delete one or change plan"
		what = Plural(int64(limit), "API key")
	case ResourceMembers:
		limit, remedy = p.Members, ", pending invitations included; remove one or change plan"
		what = Plural(int64(limit), "team member")
	default:
		return fmt.Errorf("plan: unknown resource %q", resource)
	}
	if limit == 0 || current < limit {
		return nil
	}
	return Errorf(ECodePlanLimit, "the %s plan allows %s%s", p.Name, what, remedy).
		WithInfo("limit", limit, "current", current, "plan", p.Name, "resource", resource)
}

// CheckPlanCount refuses one more of resource (ERR_PLAN_002) for a team on
// the plan named plan; count gives the team's current number. A plan this
// version does not know limits nothing (and count is not called).
func CheckPlanCount(plan, resource string, count func() (int, error)) error {
	p, err := FindPlan(plan)
	if err != nil {
		return nil
	}
	n, err := count()
	if err != nil {
		return err
	}
	return p.CheckCount(resource, n)
}
