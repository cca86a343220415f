-- check: artifact_location
-- severity: error
-- protects: artifacts live where their record type keeps them (packets in datadrops/, responses in responses/, visit signoffs in responses/signoffs/)
-- repair: move the artifact under the directory the message names and update the path field
-- scope: record
-- reported: with the layout enforced, a response whose artifact lies under datadrops/ (responses keep theirs under responses/)
-- passes: a packet's artifact anywhere under datadrops/, in a sub-directory of its own
SELECT r.record_type, r.record_id, r.file, r.artifact_field AS field,
       r.artifact_field || ' of a ' || r.record_type || ' must be under ' || t.artifact_prefix
       || ', not ' || r.artifact_path AS message
FROM records r JOIN record_types t USING (record_type)
WHERE r.layout_enforced AND t.artifact_prefix NOT LIKE '%{bucket}%'
  AND r.artifact_path IS NOT NULL
  AND substr(r.artifact_path, 1, length(t.artifact_prefix)) != t.artifact_prefix
