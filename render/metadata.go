package render

import (
	"regexp"
	"time"
)

// docMetadata is the schema's "metadata": {title, author, subject,
// keywords, language, creationDate}. Title, author, subject and keywords
// are text with placeholders; they win over the caller's Options. A fixed
// creationDate makes the output reproducible: it replaces the caller's time.
type docMetadata struct {
	title, author, subject, keywords *textTemplate
	language                         string
	created                          time.Time
}

func (c *compiler) parseMetadata(o object) *docMetadata {
	if !o.present("metadata") {
		return nil
	}
	const path = "schema.metadata"
	m, ok := c.object(path, o.raw("metadata"))
	if !ok {
		return nil
	}
	md := &docMetadata{}
	for _, f := range []struct {
		key string
		dst **textTemplate
	}{{"title", &md.title}, {"author", &md.author}, {"subject", &md.subject}, {"keywords", &md.keywords}} {
		if s, ok := c.str(m, path, f.key); ok {
			*f.dst = c.compileText(path+"."+f.key, s)
		}
	}
	if s, ok := c.str(m, path, "language"); ok {
		if !languageTag.MatchString(s) {
			c.add(path+".language", "must be a language tag such as en or de-CH")
		}
		md.language = s
	}
	if s, ok := c.str(m, path, "creationDate"); ok {
		t, valid := parseDate(s)
		if !valid {
			c.add(path+".creationDate", "must be a date (YYYY-MM-DD or RFC 3339)")
		}
		md.created = t
	}
	return md
}

// languageTag is the shape of a BCP 47 tag, loosely.
var languageTag = regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$`)

// docInfo is what a document's properties say.
type docInfo struct {
	title, author, subject, keywords, language string
	created                                    time.Time
	assets                                     AssetResolver
	requestAssets                              AssetResolver // the request's own references (Options.RequestAssets)
	fetch                                      ImageFetcher
	biz                                        business // pdfa, watermark, encryption (business.go)
}

// info works out the document properties of one render: the schema's
// metadata over opts, and a creation date of fixedDate when neither gives
// one (render has no clock).
func (t *Template) info(values map[string]any, opts Options, limits Limits) (docInfo, error) {
	in := docInfo{title: opts.Title, author: opts.Author, created: opts.Created, assets: opts.Assets, requestAssets: opts.RequestAssets,
		fetch: fetchOnce(opts.Fetch, limits.Images, limits.Memory/2)}
	if t.fmt != nil && !t.fmt.loc.IsZero() {
		in.language = t.fmt.loc.String() // the schema's metadata.language wins
	}
	if md := t.doc.metadata; md != nil {
		ev := newEvaluator(limits)
		env := ev.env(values, 0)
		for _, f := range []struct {
			tt  *textTemplate
			dst *string
		}{{md.title, &in.title}, {md.author, &in.author}, {md.subject, &in.subject}, {md.keywords, &in.keywords}} {
			if f.tt == nil {
				continue
			}
			s, err := f.tt.render(ev, env)
			if err != nil {
				return in, err
			}
			*f.dst = s
		}
		if md.language != "" {
			in.language = md.language
		}
		if !md.created.IsZero() {
			in.created = md.created
		}
	}
	if in.created.IsZero() {
		in.created = fixedDate
	}
	return in, t.resolveBusiness(&in, opts.PDF)
}
