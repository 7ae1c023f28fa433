package dashboard

import "testing"

// TestSentence: an API message starts a sentence the way a person writes
// it: initialisms in capitals ("URL", not "Url"), field names as the API
// spells them, other words with a capital letter.
func TestSentence(t *testing.T) {
	for in, want := range map[string]string{
		"url must use https":                          "URL must use https",
		"url host \"x\" resolves to a non-public one": "URL host \"x\" resolves to a non-public one",
		"id is required":                              "ID is required",
		"api keys are stored hashed":                  "API keys are stored hashed",
		"templateId is required":                      "templateId is required",
		"outputFormats needs at least one":            "outputFormats needs at least one",
		"the free plan allows 1 API key":              "The free plan allows 1 API key",
		"élan is a word":                              "Élan is a word",
		"":                                            "",
		"404":                                         "404",
		"urlencoded bodies are refused":               "Urlencoded bodies are refused",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
