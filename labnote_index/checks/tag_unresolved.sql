-- check: tag_unresolved
-- severity: error
-- protects: records use only tags of the vocabulary (a proposed or accepted tag record)
-- repair: add the tag as a proposed tag record under registry/tags/proposed/, or use an existing tag
-- reported: a packet whose tags list a slug that no tag record has
-- passes: a slug of a proposed tag (the vocabulary is proposed and accepted tags)
SELECT u.source_type AS record_type, u.source_id AS record_id, u.source_file AS file,
       'tags[' || u.position || ']' AS field,
       'each tag must resolve to a proposed or accepted tag record: no tag ' || quote(u.tag_slug)
       AS message, u.tag_slug AS subject
FROM tag_uses u
WHERE u.tag_file IS NULL
