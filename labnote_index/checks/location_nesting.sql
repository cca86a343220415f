-- check: location_nesting
-- severity: error
-- protects: tags are direct children of their status directory, as the contract lays them out (every other record may sit anywhere under its directory)
-- repair: move the file to registry/tags/<status>/<tag_slug>.json
-- scope: record
-- reported: a tag at registry/tags/accepted/2026/retention.json
-- passes: a tag at registry/tags/accepted/retention.json
SELECT r.record_type, r.record_id, r.file, t.id_field AS field,
       'a ' || r.record_type || ' record must be a direct child of registry/' || t.directory
       || '/<' || t.sub_directory || '>/' AS message
FROM records r JOIN record_types t USING (record_type)
WHERE r.registry_dir = t.directory AND t.sub_directory = 'status'
  AND r.file != 'registry/' || t.directory || '/' || r.parent_dir || '/' || r.stem || '.json'
