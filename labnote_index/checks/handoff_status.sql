-- check: handoff_status
-- severity: error
-- protects: manifests use the status vocabulary draft, blocked, ready_for_next_role, superseded (accepted is not a manifest status)
-- repair: use one of the four statuses; record downstream acceptance in the consumer's input_packets as accepted_as_input
SELECT iif(record_type = 'handoff_template', 'handoff_template', 'handoff_packet') AS record_type,
       record_id, file, field, message
FROM validation_problems
WHERE check_id = 'handoff_status'
