package s3files

import (
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

var creds = env(map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK"})

func TestParseURL(t *testing.T) {
	c, err := ParseURL("s3://docs/folio/prod?endpoint=127.0.0.1:7070&region=eu-west-1&tls=false&partSizeMB=16&pathStyle=true", creds)
	if err != nil {
		t.Fatal(err)
	}
	if c.Bucket != "docs" || c.Prefix != "folio/prod" || c.Endpoint != "127.0.0.1:7070" || c.Region != "eu-west-1" || c.TLS || c.PartSize != 16<<20 ||
		!c.PathStyle || c.AccessKey != "AK" || c.SecretKey != "SK" {
		t.Fatalf("%+v", c)
	}
	if c, err := ParseURL("s3://docs?region=eu-central-1", creds); err != nil || c.Endpoint != "s3.eu-central-1.amazonaws.com" || !c.TLS || c.Prefix != "" || c.PartSize != DefaultPartSize {
		t.Fatalf("AWS default: %+v %v", c, err)
	}
	if s := c.String(); strings.Contains(s, "SK") || strings.Contains(s, "AK") {
		t.Fatalf("String shows credentials: %s", s)
	}
	for _, c := range []struct{ url, want string }{
		{"s3://AK:SK@docs/x?endpoint=127.0.0.1:1", "must not carry credentials"},
		{"http://docs/x", "scheme"},
		{"s3:///x?endpoint=127.0.0.1:1", "bucket is missing"},
		{"s3://docs/x?endpoint=s3.example.com&tls=false", "only for a loopback endpoint"},
		{"s3://docs/x?endpoint=127.0.0.1:1&tls=maybe", "not true or false"},
		{"s3://docs/x?endpoint=127.0.0.1:1&tls=false&ca=/x.pem", "ca= needs TLS"},
		{"s3://docs/x?endpoint=127.0.0.1:1&partSizeMB=2", "5 to 512"},
		{"s3://docs/x?endpoint=127.0.0.1:1&secret=SK", "unknown option"},
		{"s3://docs/a/../b?endpoint=127.0.0.1:1", "not a clean path"},
	} {
		_, err := ParseURL(c.url, creds)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "SK") {
			t.Errorf("%s: the error shows the secret: %v", c.url, err)
		}
	}
	if _, err := ParseURL("s3://docs/x?endpoint=localhost:9000&tls=false", env(nil)); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Fatalf("no credentials: %v", err)
	}
}
