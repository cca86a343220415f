-- check: legacy_spelling
-- severity: warning
-- protects: records use the v1 canonical field names; legacy spellings are migration inputs only
-- repair: rename the field to the canonical name the message gives (or add record_type)
SELECT record_type, record_id, file, legacy_field AS field,
       'legacy spelling ' || legacy_field || ': use ' || canonical_field || ' (' || note || ')'
       AS message
FROM legacy_fields
