-- check: reference_unreadable
-- severity: warning
-- protects: a reference to a record whose file is broken says so and where, so the repair goes to that file, never into a second record with the same ID
-- repair: repair the cited record's file (its file_unreadable finding says what is wrong); do not create another record with that ID
-- reported: a response whose source_packet_id names a packet whose file cannot be read
-- passes: a reference to a readable record (resolved), or to no record at all (reference_unresolved's)
SELECT x.source_type AS record_type, x.source_id AS record_id, x.source_file AS file, x.field,
       x.field || ' names ' || quote(x.target_id) || ', whose file ' || x.target_file
       || ' cannot be read (file_unreadable): repair that file' AS message
FROM records r CROSS JOIN refs x ON x.target_file = r.file  -- from the few unreadable records
WHERE r.unreadable
UNION ALL
SELECT u.source_type, u.source_id, u.source_file, 'tags',
       'tag ' || quote(u.tag_slug) || ' is the tag record ' || u.tag_file
       || ', whose file cannot be read (file_unreadable): repair that file'
FROM records r CROSS JOIN tag_uses u ON u.tag_file = r.file
WHERE r.unreadable
