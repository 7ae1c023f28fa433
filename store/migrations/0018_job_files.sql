-- Documents kept in the database (issue 24): a document up to
-- app.DefaultInlineMax bytes is stored here, in the transaction that records
-- its job's end, instead of in a file under files/ (a temp file, two fsyncs
-- and a rename). jobs.file_path still names the document (team/job.ext) and
-- file_size gives its size; a row here says where it is. It goes with its
-- job (ON DELETE CASCADE: a delete, the retention purge) or when the janitor
-- clears the job's file at the end of its retention (ClearFile).
CREATE TABLE job_files (
	job_id TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
	data   BLOB NOT NULL
);
