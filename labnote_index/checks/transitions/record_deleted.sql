-- check: record_deleted
-- severity: warning
-- protects: canonical records are never deleted: history stays in the registry (archive instead)
-- repair: restore the record and set its status to archived (or retired) instead
-- reported: a packet's file removed in the change
-- passes: a packet moved to another bucket (a move, not a deletion)
SELECT b.record_type, b.record_id, b.file, '' AS field,
       b.record_type || ' ' || quote(b.record_id) || ' exists at base and is gone at head'
       AS message
FROM base.records b
WHERE b.record_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM records h
                  WHERE h.record_type = b.record_type AND h.record_id = b.record_id)
