-- check: response_decision
-- severity: error
-- protects: an accepted or rejected response records who decided and when (that the decision does not predate the response is timestamp_order's)
-- repair: fill accepted_by and decision_at (not earlier than created_at), or set the response back to pending_review
-- scope: record
-- reported: a response with status accepted and decided_by null
-- passes: a response with status pending and no decision fields
SELECT 'response' AS record_type, response_id AS record_id, file, 'accepted_by' AS field,
       'a response with status ' || quote(status) || ' must record accepted_by' AS message
FROM responses
WHERE status IN ('accepted', 'rejected') AND coalesce(accepted_by, '') = ''
UNION ALL
SELECT 'response', response_id, file, 'decision_at',
       'a response with status ' || quote(status) || ' must record decision_at'
FROM responses
WHERE status IN ('accepted', 'rejected') AND coalesce(decision_at, '') = ''
