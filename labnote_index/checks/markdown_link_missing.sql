-- check: markdown_link_missing
-- severity: error
-- protects: every repository-relative link in a Markdown file (a record's artifact, a README, a packet document) leads to a file or directory that exists, as the upstream link check requires
-- repair: correct the link (relative to the Markdown file's directory), or commit the file it names
-- reported: [notes](docs/missing.md) in an artifact, where docs/missing.md does not exist
-- passes: a link to https://example.com, to #a-heading, or inside a code span or block
SELECT r.record_type, r.record_id, l.source_file AS file, '' AS field,
       'line ' || l.line || ': link to ' || quote(l.raw_target) || ' names '
       || quote(l.target) || ', which '
       || CASE t.status
            WHEN 'escapes' THEN 'leads outside the repository through a symlink'
            WHEN 'git' THEN 'is inside .git, git''s own directory: no part of the repository its readers see'
            ELSE 'does not exist'
          END AS message,
       l.line, l.[column], l.raw_target AS subject
FROM markdown_links l
JOIN link_targets t ON t.path = l.target
LEFT JOIN records r ON r.artifact_path = l.source_file
WHERE t.status != 'ok'
