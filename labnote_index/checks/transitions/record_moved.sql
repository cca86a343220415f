-- check: record_moved
-- severity: warning
-- protects: a record keeps its file: only a status change moves it, between the buckets of its type
-- repair: move the file back to where it was, or explain the move in the pull request
-- reported: a packet's file renamed to another directory while its status stayed the same
-- passes: a message moved from open/ to archived/ because its status became archived
SELECT h.record_type, h.record_id, h.file, '' AS field,
       'record moved from ' || b.file || ' for no status change of its type' AS message
FROM records h
JOIN record_pairs p ON p.head_file = h.file
JOIN base.records b ON b.file = p.base_file
JOIN record_types t ON t.record_type = h.record_type
WHERE b.file != h.file
  AND NOT (t.sub_directory IN ('bucket', 'status') AND b.status IS NOT h.status
           AND b.stem = h.stem AND b.registry_dir IS h.registry_dir)
