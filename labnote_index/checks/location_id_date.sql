-- check: location_id_date
-- severity: error
-- protects: the date at the front of an ID is the date of created_at, so IDs sort and group by day truthfully
-- repair: correct created_at, or give the record an ID (and file name) that starts with its creation date
-- scope: record
-- reported: packet 20260102-claude-topic with created_at 2026-01-01T23:00:00Z
-- passes: created_at 2026-01-02T00:00:00Z, the first instant of the ID's day
SELECT r.record_type, r.record_id, r.file, 'created_at' AS field,
       'the ID date ' || substr(r.record_id, 1, 8) || ' must equal the created_at date '
       || substr(r.created_at, 1, 10) AS message
FROM records r JOIN record_types t USING (record_type)
WHERE t.id_grammar = 'artifact_id'
  AND r.record_id GLOB '[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-*'
  AND r.created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'
  AND substr(r.record_id, 1, 8) != replace(substr(r.created_at, 1, 10), '-', '')
