-- check: file_unreadable
-- severity: error
-- protects: every record file can be read as one JSON object, so nothing in the registry is invisible
-- repair: fix the file so it holds one UTF-8 JSON object (no NaN, no trailing text), or remove it
SELECT record_type, NULL AS record_id, path AS file, '' AS field, error AS message
FROM files
WHERE error IS NOT NULL
