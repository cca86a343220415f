-- check: duplicate_id
-- severity: error
-- protects: IDs are unique per record type, so every reference names exactly one record
-- repair: give one of the records a new ID (and file name), and update references that meant it
SELECT r.record_type, r.record_id, r.file, t.id_field AS field,
       'IDs are unique per record type: ' || r.record_type || ' ' || quote(r.record_id)
       || ' is also in ' || (SELECT group_concat(o.file, ', ') FROM records o
                             WHERE o.record_type = r.record_type AND o.record_id = r.record_id
                               AND o.file != r.file) AS message
FROM records r JOIN record_types t USING (record_type)
WHERE r.record_id IS NOT NULL
  AND EXISTS (SELECT 1 FROM records o
              WHERE o.record_type = r.record_type AND o.record_id = r.record_id AND o.file != r.file)
