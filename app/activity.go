package app

import (
	"context"
	"log/slog"
	"time"
)

// Activity types of a team's feed.
const (
	ActivityMemberJoined      = "member_joined"
	ActivityMemberLeft        = "member_left"
	ActivityMemberRemoved     = "member_removed"
	ActivityRoleChanged       = "role_changed"
	ActivityInvitationSent    = "invitation_sent"
	ActivityTemplateCreated   = "template_created"
	ActivityTemplateUpdated   = "template_updated"
	ActivityTemplatePublished = "template_published"
	ActivityTemplateDeleted   = "template_deleted"
)

// ActivityUser is a person in the feed: who acted, or whom it was about.
// Reads fill in the current name and email (a purged account reads as
// "Deleted user").
type ActivityUser struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// ActivityTemplate names the template of a template event as it was then.
type ActivityTemplate struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Activity is one event of a team's feed. User is who acted; Target is the
// member or invited address a member event is about.
type Activity struct {
	ID        string            `json:"id"`
	TeamID    string            `json:"-"`
	Type      string            `json:"type"`
	User      ActivityUser      `json:"user"`
	Target    *ActivityUser     `json:"target,omitempty"`
	Template  *ActivityTemplate `json:"template,omitempty"`
	Details   map[string]any    `json:"details,omitempty"`
	Timestamp time.Time         `json:"timestamp"`
}

// ActivityStore keeps the feed.
type ActivityStore interface {
	CreateActivity(ctx context.Context, a *Activity) error
	// FindActivities lists a team's events, newest first; the total counts
	// at most MaxCount rows.
	FindActivities(ctx context.Context, teamID string, pg Page) ([]*Activity, ListInfo, error)
}

// ActivityLog records feed events. A nil *ActivityLog records nothing, so
// services may leave it unset.
type ActivityLog struct {
	Store  ActivityStore
	Logger *slog.Logger
	Now    func() time.Time
}

// RecordActivity appends an event to the team's feed. The action it
// describes has already happened, so a failure to record it is logged
// rather than returned.
func (l *ActivityLog) RecordActivity(ctx context.Context, a Activity) {
	if l == nil || l.Store == nil {
		return
	}
	a.Timestamp = l.Now().UTC()
	a.ID = NewTimeID("act", a.Timestamp)
	if err := l.Store.CreateActivity(context.WithoutCancel(ctx), &a); err != nil && l.Logger != nil {
		l.Logger.Error("record activity", "type", a.Type, "team", a.TeamID, "err", err)
	}
}

// OwnerSucceededActivity records, when the owner userID's account is
// deleted, that heir (of role heirRole) became the team's owner.
func OwnerSucceededActivity(teamID, userID, heir, heirRole string, now time.Time) *Activity {
	return &Activity{ID: NewTimeID("act", now), TeamID: teamID, Type: ActivityRoleChanged,
		User: ActivityUser{ID: userID}, Target: &ActivityUser{ID: heir}, Timestamp: now,
		Details: map[string]any{"from": heirRole, "to": RoleOwner, "reason": "the previous owner's account was deleted"}}
}

// DeletedMemberLeftActivity records that userID left the team because
// their account was deleted.
func DeletedMemberLeftActivity(teamID, userID string, now time.Time) *Activity {
	return &Activity{ID: NewTimeID("act", now), TeamID: teamID, Type: ActivityMemberLeft,
		User: ActivityUser{ID: userID}, Timestamp: now, Details: map[string]any{"reason": "account deleted"}}
}
