-- check: visitor_id_grammar
-- severity: error
-- protects: visitor IDs follow <family>-<YYYYMMDD>-<HHMM>-<short-purpose>-<nn>
-- repair: rename the visitor record (visitor_id and file name) to the grammar
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'visitor_id_grammar'
