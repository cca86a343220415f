-- generic: validation
-- The problems of one kind found reading and validating files, for the check
-- :check (declared in validation.toml). A handoff file's problem is the packet's
-- (or the template's), as every handoff finding is.
SELECT iif(family = 'handoff',
           iif(record_type = 'handoff_template', 'handoff_template', 'handoff_packet'),
           record_type) AS record_type,
       record_id, file, field, message
FROM validation_problems
WHERE check_id = :check
