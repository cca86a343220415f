-- check: json_strict
-- severity: error
-- protects: a record means one thing to every reader (no byte order mark, no key given twice, no integer beyond 64 bits, no unpaired UTF-16 surrogate escape)
-- repair: save the file as UTF-8 without a byte order mark, keep one value per key, write very large numbers as strings and text as valid Unicode
-- fix: strip a UTF-8 byte order mark (nothing else: duplicate keys are a person's decision)
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'json_strict'
