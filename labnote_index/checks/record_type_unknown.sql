-- check: record_type_unknown
-- severity: error
-- protects: every JSON file under registry/ is a record of one of the seven record types
-- repair: set record_type to packet, response, message, notification, visit, visitor or tag, or move the file out of registry/
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'record_type_unknown'
