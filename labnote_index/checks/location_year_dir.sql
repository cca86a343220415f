-- check: location_year_dir
-- severity: error
-- protects: a packet, response or visit filed under a year directory (registry/<type>/<YYYY>/; year directories are optional) sits in the one of its created_at year
-- repair: move the file into the directory named after its created_at year, or directly into registry/<type>/
-- fix: move the record into the directory of its created_at year, unless the file exists there
-- scope: record
-- reported: a packet created in 2026 filed under registry/packets/2025/
-- passes: a packet directly under registry/packets/ (year directories are optional)
SELECT r.record_type, r.record_id, r.file, 'created_at' AS field,
       'a ' || r.record_type || ' created in ' || substr(r.created_at, 1, 4)
       || ' belongs in a ' || substr(r.created_at, 1, 4) || '/ directory, not ' || r.sub_dir || '/'
       AS message
FROM records r JOIN record_types t USING (record_type)
WHERE r.layout_enforced AND t.sub_directory = 'year'
  AND r.created_at GLOB '[0-9][0-9][0-9][0-9]-*'
  AND r.sub_dir GLOB '[0-9][0-9][0-9][0-9]'
  AND r.sub_dir != substr(r.created_at, 1, 4)
