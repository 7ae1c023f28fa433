package render

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
)

func TestScratchSmoke(t *testing.T) {
	dir := os.Getenv("SMOKE")
	if dir == "" {
		t.Skip()
	}
	raw, _ := os.ReadFile(dir + "/t.json")
	var def Definition
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	vraw, _ := os.ReadFile(dir + "/v.json")
	var vars map[string]any
	json.Unmarshal(vraw, &vars)
	tpl := MustCompile(t, def)
	values, err := tpl.Values(vars)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{PDF, XLSX} {
		var buf bytes.Buffer
		st, err := tpl.Render(context.Background(), &buf, f, values, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", f, st)
		os.WriteFile(dir+"/out."+string(f), buf.Bytes(), 0o644)
	}
}

func TestScratchDump(t *testing.T) {
	dir := os.Getenv("SMOKE")
	if dir == "" {
		t.Skip()
	}
	raw, _ := os.ReadFile(dir + "/out.xlsx")
	t.Log("\n" + DumpXLSX(t, raw))
}
