-- Sample data: values for a template's variables that the dashboard's editor
-- fills its form with and previews render when a request gives none. It
-- travels with the template (get, export, import) and each published version
-- keeps the sample data of its time. A JSON object; '{}' when none.
-- (Numbered 0013: 0011 and 0012 are taken by the store's index work.)

ALTER TABLE templates ADD COLUMN sample_data TEXT NOT NULL DEFAULT '{}';
ALTER TABLE template_versions ADD COLUMN sample_data TEXT NOT NULL DEFAULT '{}';
