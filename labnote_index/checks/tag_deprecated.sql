-- check: tag_deprecated
-- severity: error
-- protects: records name only proposed or accepted tags: new work does not keep using a retired one (the upstream validator fails on it)
-- repair: replace the tag with its successor (see the deprecated tag's notes)
-- reported: a packet whose tags list a tag in registry/tags/deprecated/
-- passes: a packet naming a proposed tag
SELECT u.source_type AS record_type, u.source_id AS record_id, u.source_file AS file,
       'tags[' || u.position || ']' AS field,
       'tag ' || quote(u.tag_slug) || ' is deprecated' AS message
FROM tag_uses u JOIN records t ON t.file = u.tag_file
WHERE t.status = 'deprecated'
