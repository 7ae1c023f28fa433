package app

import "context"

// Mail is one outgoing message.
type Mail struct {
	To      string
	Subject string
	Body    string
}

// Mailer sends mail: by SMTP when configured, otherwise into the outbox
// directory as .eml files.
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}
