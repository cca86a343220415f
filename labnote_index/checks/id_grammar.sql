-- check: id_grammar
-- severity: error
-- protects: packet, response, message, notification and visit IDs follow YYYYMMDD-<creator-slug>-<short-topic>, and a visit ID is <packet_id>-visit
-- repair: rename the record (ID field and file name) to the grammar
-- scope: record
-- record_problems: id_grammar
-- reported: packet_id 2026-01-01-claude-topic, or a visit ID that does not end in -visit
-- passes: an ID whose creator slug has digits and hyphens, 20260101-gpt-4o-retention
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'id_grammar'
UNION ALL
SELECT record_type, record_id, file, 'visit_id',
       'visit_id must be <packet_id>-visit, got ' || quote(record_id)
FROM records
WHERE record_type = 'visit' AND record_id NOT LIKE '%_-visit'
  AND file NOT IN (SELECT file FROM validation_errors WHERE error_type = 'id_grammar')
