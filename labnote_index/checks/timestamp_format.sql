-- check: timestamp_format
-- severity: error
-- protects: created_at and every other timestamp is RFC 3339, so records sort and compare in time
-- repair: write the timestamp as YYYY-MM-DDTHH:MM:SSZ (or with a +HH:MM offset)
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'timestamp_format'
