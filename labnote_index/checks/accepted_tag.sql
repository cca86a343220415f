-- check: accepted_tag
-- severity: error
-- protects: an accepted tag records who accepted it, when, and on what basis
-- repair: fill accepted_by, accepted_at and acceptance_basis (operator_supplied or operator_approved_promotion), or set the tag back to proposed
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'accepted_tag'
