-- check: json_strict
-- severity: error
-- protects: a record means one thing to every reader (no byte order mark, no key given twice)
-- repair: save the file as UTF-8 without a byte order mark and keep one value per key
SELECT record_type, record_id, file, field, message
FROM validation_errors
WHERE error_type IN ('encoding_bom', 'duplicate_key')
