-- check: schema_unknown_field
-- severity: error
-- protects: records carry only contract fields (additionalProperties is false)
-- repair: remove the field, or move its content into the artifact or notes
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'schema_unknown_field'
