package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Readiness is the answer of GET /readyz.
type Readiness struct {
	Status string `json:"status"`
	Checks map[string]struct {
		Status     string  `json:"status"`
		Error      string  `json:"error"`
		DurationMS float64 `json:"durationMs"`
	} `json:"checks"`
	// Ready is true when the server answered 200.
	Ready bool `json:"-"`
}

// Ready calls GET /readyz. A 503 is not an error: Ready is false and Checks
// say which check failed.
func (c *Client) Ready(ctx context.Context) (*Readiness, error) {
	res, err := c.get(ctx, "/readyz", "")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var r Readiness
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("readyz: %s: %w", res.Status, err)
	}
	r.Ready = res.StatusCode == http.StatusOK
	return &r, nil
}

// Healthy calls GET /healthz.
func (c *Client) Healthy(ctx context.Context) error {
	res, err := c.get(ctx, "/healthz", "")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz: %s", res.Status)
	}
	return nil
}

// Metrics fetches GET /metrics with the server's metrics token ("" from a
// loopback address without --metrics-token) and parses the samples.
func (c *Client) Metrics(ctx context.Context, token string) (Samples, error) {
	res, err := c.get(ctx, "/metrics", token)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return nil, fmt.Errorf("metrics: %s: %s", res.Status, strings.TrimSpace(string(b)))
	}
	return ParseSamples(res.Body)
}

// OpenAPI fetches the API description.
func (c *Client) OpenAPI(ctx context.Context) (map[string]any, error) {
	var doc map[string]any
	return doc, c.Do(ctx, "GET", "/api/openapi.json", nil, &doc)
}

func (c *Client) get(ctx context.Context, path, token string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.BaseURL+path, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return c.HTTP.Do(req)
}

// Samples maps a series as written in the exposition format, e.g.
// `folio_documents_total{format="pdf",status="completed"}`, to its value.
type Samples map[string]float64

// ParseSamples reads the Prometheus text format (comments skipped).
func ParseSamples(r io.Reader) (Samples, error) {
	out := Samples{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("metrics: bad line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: bad value in %q", line)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// Sum adds the values of every series of the metric name whose labels
// include all of the given name="value" pairs.
func (s Samples) Sum(name string, labels ...string) float64 {
	var total float64
	for series, v := range s {
		n, rest, _ := strings.Cut(series, "{")
		if n != name {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				match = false
				break
			}
		}
		if match {
			total += v
		}
	}
	return total
}
