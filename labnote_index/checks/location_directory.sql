-- check: location_directory
-- severity: error
-- protects: each record lives in the registry directory of its record_type, so every tool finds it where it looks
-- repair: move the file to registry/<type directory>/ (packets, responses, messages, notifications, visits, visitors, tags), or correct its record_type
-- scope: record
-- reported: a response record (record_type response) filed under registry/packets/
-- passes: a packet under registry/packets/2026/, a sub-directory of its own directory
SELECT r.record_type, r.record_id, r.file, 'record_type' AS field,
       'a ' || r.record_type || ' record belongs under registry/' || t.directory || '/, not '
       || CASE WHEN r.registry_dir = '' THEN 'loose in registry/' ELSE 'registry/' || r.registry_dir || '/' END
       AS message
FROM records r JOIN record_types t USING (record_type)
WHERE r.registry_dir IS NOT NULL AND r.registry_dir != t.directory
