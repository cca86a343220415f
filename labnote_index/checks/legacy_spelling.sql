-- check: legacy_spelling
-- severity: warning
-- protects: records use the v1 canonical field names; legacy spellings are migration inputs only
-- repair: rename the field to the canonical name the message gives (or add record_type)
-- fix: rename legacy fields to their canonical names and add record_type and schema_version where the directory says which; what cannot be derived is left and reported
-- scope: record
-- reported: a packet with the legacy field name packetId
-- passes: the canonical field name packet_id
SELECT record_type, record_id, file, legacy_field AS field,
       'legacy spelling ' || legacy_field || ': use ' || canonical_field || ' (' || note || ')'
       AS message
FROM legacy_fields
