-- check: schema_enum
-- severity: error
-- protects: statuses, origins, coverage and acceptance basis use the contract vocabulary
-- repair: use one of the values the message lists
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'schema_enum'
