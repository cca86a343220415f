-- check: location_nesting
-- severity: error
-- protects: tags are direct children of their status directory and visitors of registry/visitors/, as the contract lays them out
-- repair: move the file to registry/tags/<status>/<tag_slug>.json or registry/visitors/<visitor_id>.json
SELECT r.record_type, r.record_id, r.file, t.id_field AS field,
       'a ' || r.record_type || ' record must be a direct child of registry/' || t.directory
       || CASE WHEN t.sub_directory IS NULL THEN '/' ELSE '/<' || t.sub_directory || '>/' END
       AS message
FROM records r JOIN record_types t USING (record_type)
WHERE r.registry_dir = t.directory
  AND (t.sub_directory IS NULL OR t.sub_directory = 'status')
  AND r.file != 'registry/' || t.directory || '/'
      || CASE WHEN t.sub_directory IS NULL THEN '' ELSE r.parent_dir || '/' END
      || r.stem || '.json'
