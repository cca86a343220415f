-- check: provenance
-- severity: error
-- protects: packets and responses say where their content came from: third_party/web/mixed cite source_refs, unknown explains itself in source_note, model_generated names what it derives from
-- repair: add the source references, the source note, or the derivative_of IDs that the content_origin requires
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'provenance'
