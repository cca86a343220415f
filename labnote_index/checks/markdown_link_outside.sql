-- check: markdown_link_outside
-- severity: error
-- protects: no Markdown link leaves the repository (an absolute path, or more '..' than there are directories): a reader of the repository cannot follow it
-- repair: link to a file inside the repository, relative to the Markdown file's directory, or to a full https:// URL
-- reported: [x](../../../../etc/passwd) or [x](/home/me/notes.md)
-- passes: [x](../README.md) from a file one directory down (it stays inside)
SELECT r.record_type, r.record_id, l.source_file AS file, '' AS field,
       'line ' || l.line || ': link to ' || quote(l.raw_target) || ' leaves the repository'
       AS message,
       l.line, l.[column], l.raw_target AS subject
FROM markdown_links l
LEFT JOIN records r ON r.artifact_path = l.source_file
WHERE l.target IS NULL
