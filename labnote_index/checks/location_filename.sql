-- check: location_filename
-- severity: error
-- protects: the file name stem equals the record ID, so a record can be found from its ID alone
-- repair: rename the file to <ID>.json (or correct the ID if the file name is the intended one)
-- fix: rename the file to <ID>.json, unless that file exists
-- scope: record
-- reported: registry/packets/a.json holding packet 20260101-claude-topic
-- passes: registry/packets/20260101-claude-topic.json
SELECT r.record_type, r.record_id, r.file, t.id_field AS field,
       'file name stem must equal the record ID: ' || quote(r.stem) || ' is not ' || quote(r.record_id)
       AS message
FROM records r JOIN record_types t USING (record_type)
WHERE r.layout_enforced AND r.record_id IS NOT NULL AND r.stem != r.record_id
