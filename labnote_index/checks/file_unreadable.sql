-- check: file_unreadable
-- severity: error
-- protects: every record file can be read as one JSON object and every file of a handoff packet can be read, so nothing is invisible
-- repair: fix the file so it holds one UTF-8 JSON object (no NaN, no trailing text), make it readable, or replace a symlink or special file with a regular file
-- reported: a record file holding two JSON objects, a trailing comma, NaN, or invalid UTF-8
-- passes: a record with a byte order mark (json_strict's, not this check's: the file is still read)
SELECT record_type, NULL AS record_id, path AS file, '' AS field, error AS message
FROM files
WHERE error IS NOT NULL
UNION ALL
SELECT 'handoff_packet', h.packet_dir,
       CASE h.packet_dir WHEN '' THEN h.path ELSE h.packet_dir || '/' || h.path END, '', h.error
FROM handoff_files h
WHERE h.error IS NOT NULL
