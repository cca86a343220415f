-- check: lifecycle_bucket
-- severity: error
-- protects: a message, notification or tag sits in (anywhere under) the bucket its status names, record and artifact alike, so a directory listing tells the state
-- repair: move the record (and its artifact) into the bucket of its status, or correct the status
-- fix: move the record, and its artifact (updating the path field), into the bucket of its status
-- scope: record
-- reported: a message with status archived filed under registry/messages/open/
-- passes: an archived message anywhere under registry/messages/archived/, in a sub-directory of its own
SELECT r.record_type, r.record_id, r.file, 'status' AS field,
       r.record_type || ' status ' || quote(r.status) || ' requires the record under the '
       || b.bucket || ' bucket, not ' || iif(r.sub_dir = '', 'outside every bucket', r.sub_dir || '/')
       AS message
FROM records r
JOIN status_buckets b ON b.record_type = r.record_type AND b.status = r.status
WHERE r.layout_enforced AND r.sub_dir != b.bucket
UNION ALL
SELECT r.record_type, r.record_id, r.file, t.artifact_field AS field,
       r.record_type || ' status ' || quote(r.status) || ' requires the artifact under '
       || replace(t.artifact_prefix, '{bucket}', b.bucket) || ', not ' || r.artifact_path AS message
FROM records r
JOIN record_types t USING (record_type)
JOIN status_buckets b ON b.record_type = r.record_type AND b.status = r.status
WHERE r.layout_enforced AND t.artifact_prefix LIKE '%{bucket}%' AND r.artifact_path IS NOT NULL
  AND substr(r.artifact_path, 1, length(replace(t.artifact_prefix, '{bucket}', b.bucket)))
      != replace(t.artifact_prefix, '{bucket}', b.bucket)
