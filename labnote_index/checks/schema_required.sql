-- check: schema_required
-- severity: error
-- protects: every field the Registry Contract requires is present (null where the schema allows it)
-- repair: add the missing field; use null or an empty string/array where the value is unknown and the schema allows it
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'schema_required'
