-- A generate or batch request may set business PDF options (pdfa,
-- watermark, documentMetadata; issue 23) over its template's; the worker
-- renders the job with them. JSON, '' for none. Passwords (encrypt) are
-- never stored: the row records only that the request asked for
-- encryption, as {"encrypted": true}.

ALTER TABLE jobs ADD COLUMN pdf_options TEXT NOT NULL DEFAULT '';
