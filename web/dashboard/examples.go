package dashboard

import (
	"embed"
	"encoding/json"
	"fmt"
)

// The examples a new template can start from. invoice and monthly-report
// are copies of testdata/templates (a test keeps them equal), each with its
// sample variables.
//
//go:embed examples/*.json
var exampleFiles embed.FS

type example struct {
	ID          string
	Name        string
	Description string
	Body        []byte         // a POST /api/templates body
	Vars        map[string]any // sample values for the preview
}

var examples = loadExamples("blank", "invoice", "monthly-report")

func loadExamples(ids ...string) []*example {
	var out []*example
	for _, id := range ids {
		body, err := exampleFiles.ReadFile("examples/" + id + ".json")
		if err != nil {
			panic(err)
		}
		vars, err := exampleFiles.ReadFile("examples/" + id + ".vars.json")
		if err != nil {
			panic(err)
		}
		ex := &example{ID: id, Body: body}
		var head struct{ Name, Description string }
		if err := json.Unmarshal(body, &head); err != nil {
			panic(fmt.Sprintf("example %s: %v", id, err))
		}
		ex.Name, ex.Description = head.Name, head.Description
		if err := json.Unmarshal(vars, &ex.Vars); err != nil {
			panic(fmt.Sprintf("example %s vars: %v", id, err))
		}
		out = append(out, ex)
	}
	return out
}

func findExample(id string) *example {
	for _, ex := range examples {
		if ex.ID == id {
			return ex
		}
	}
	return nil
}
