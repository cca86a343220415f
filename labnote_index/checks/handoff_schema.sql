-- check: handoff_schema
-- severity: error
-- protects: handoff manifests and packet locks carry every field of packet-schema.md with the right type (handoff_to, a list of roles, or return_to, one role; unknown fields are kept, never rejected)
-- repair: add the missing field or fix its type, following docs/workflow packet-schema.md
SELECT iif(record_type = 'handoff_template', 'handoff_template', 'handoff_packet') AS record_type,
       record_id, file, field, message
FROM validation_problems
WHERE check_id = 'handoff_schema'
