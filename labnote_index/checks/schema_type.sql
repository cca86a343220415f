-- check: schema_type
-- severity: error
-- protects: each field has the JSON type the schema gives it (booleans are true/false, lists are arrays, required strings are not empty)
-- repair: write the value with the type the schema names
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'schema_type'
