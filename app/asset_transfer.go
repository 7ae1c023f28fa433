package app

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"folio/render"
)

// exportAssets returns the assets t's schema names, with their bytes.
// References to assets the team no longer has are left out: the template
// names them, and fails to render, the same way after an import.
func (s *TemplateService) exportAssets(ctx context.Context, t *Template) ([]ExportedAsset, error) {
	if s.Assets == nil {
		return nil, nil
	}
	var out []ExportedAsset
	for _, ref := range AssetRefs(t.Schema) {
		a, err := s.Assets.Assets.FindAsset(ctx, t.TeamID, ref)
		if ErrorCode(err) == ECodeAssetNotFound {
			continue
		} else if err != nil {
			return nil, err
		}
		kind, data, err := s.Assets.ResolveAsset(ctx, t.TeamID, a.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, ExportedAsset{Ref: ref, Name: a.Name, Kind: kind, SHA256: a.SHA256, ContentBase64: base64.StdEncoding.EncodeToString(data)})
	}
	return out, nil
}

// importAssets stores the assets of an import file in the caller's team,
// with the checks and quota of an upload, and returns the schema naming
// them by their names there. An asset the team already has with the same
// name and bytes is reused; one whose name is taken by other bytes gets
// " (Imported)" appended.
func (s *TemplateService) importAssets(ctx context.Context, schema json.RawMessage, assets []ExportedAsset) (json.RawMessage, error) {
	if s.Assets == nil {
		return schema, nil
	}
	p, err := assetWriter(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // ref in the file -> name in this team
	for i, ea := range assets {
		bad := func(format string, args ...any) error {
			return (&Error{Code: ECodeImportInvalid, Message: fmt.Sprintf("import data invalid: assets[%d] ", i) + fmt.Sprintf(format, args...)}).
				WithInfo("field", fmt.Sprintf("assets[%d]", i))
		}
		if ea.Ref == "" || ea.Name == "" {
			return nil, bad("needs ref and name")
		}
		data, err := base64.StdEncoding.DecodeString(ea.ContentBase64)
		if err != nil {
			return nil, bad("contentBase64 is not valid base64")
		}
		c, err := s.Assets.checkBytes(ctx, data)
		if err != nil {
			if e, ok := err.(*Error); ok {
				return nil, bad("(%s): %s", ea.Name, e.Message)
			}
			return nil, err
		}
		base, err := checkAssetName(ea.Name)
		if err != nil {
			return nil, bad("name: %v", err.(*Error).Message)
		}
		name := base
		for n := 1; ; n++ {
			a, err := s.Assets.Assets.FindAsset(ctx, p.TeamID, name)
			if ErrorCode(err) == ECodeAssetNotFound {
				now := s.Now().UTC()
				a = &Asset{ID: NewID("ast"), TeamID: p.TeamID, Name: name, CreatedAt: now, UpdatedAt: now, CreatedBy: p.UserID}
				a.fill(c, data)
				if err := s.Assets.write(a, data); err != nil {
					return nil, err
				}
				if err := s.Assets.Assets.CreateAsset(ctx, a); err != nil {
					s.Assets.Files.RemoveFile(a.File)
					return nil, err
				}
				break
			} else if err != nil {
				return nil, err
			}
			if sum := sha256.Sum256(data); a.Kind == c.kind && a.SHA256 == hex.EncodeToString(sum[:]) {
				break // the team has it already
			}
			name = base + " (Imported)"
			if n > 1 {
				name = fmt.Sprintf("%s (Imported %d)", base, n)
			}
		}
		names[ea.Ref] = name
	}
	return renameAssetRefs(schema, names)
}

// renameAssetRefs rewrites every "asset:<ref>" string of a schema whose
// ref is in names.
func renameAssetRefs(schema json.RawMessage, names map[string]string) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil, err
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			if ref, ok := strings.CutPrefix(strings.TrimSpace(v), "asset:"); ok {
				if name, ok := names[ref]; ok {
					return "asset:" + name
				}
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		}
		return v
	}
	return json.Marshal(walk(v))
}

// assetWarnings names the asset references of t's schema that its team has
// no asset for: the template saves (the asset may be uploaded next), but
// its documents would fail with ERR_ASSET_001 until then.
func (s *TemplateService) assetWarnings(ctx context.Context, t *Template) []render.Issue {
	if s.Assets == nil {
		return nil
	}
	var out []render.Issue
	for _, ref := range AssetRefs(t.Schema) {
		a, err := s.Assets.Assets.FindAsset(ctx, t.TeamID, ref)
		if ErrorCode(err) == ECodeAssetNotFound {
			out = append(out, render.Issue{Path: "schema", Message: fmt.Sprintf("asset:%s: the team has no asset with that name or id; upload it (POST /api/assets) before generating", clip(ref, 80))})
		}
		if err == nil && a.Format == "svg" {
			// What the drawing leaves out of the SVG (filters, masks…).
			if _, data, err := s.Assets.ResolveAsset(ctx, t.TeamID, ref); err == nil {
				notes, _ := render.CheckSVG(data)
				for _, n := range notes {
					out = append(out, render.Issue{Path: "schema", Message: fmt.Sprintf("asset:%s: SVG: %s", clip(ref, 80), n)})
				}
			}
		}
	}
	return out
}
