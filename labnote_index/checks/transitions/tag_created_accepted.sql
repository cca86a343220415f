-- check: tag_created_accepted
-- severity: error
-- protects: only an operator supplies a tag that enters the vocabulary already accepted
-- repair: add the tag as proposed, or record acceptance_basis operator_supplied if the operator supplied it
-- reported: a tag added already accepted with acceptance_basis operator_approved_promotion
-- passes: a tag added accepted with acceptance_basis operator_supplied
SELECT 'tag' AS record_type, t.tag_slug AS record_id, t.file, 'acceptance_basis' AS field,
       'tag ' || quote(t.tag_slug) || ' is created accepted with acceptance_basis '
       || iif(t.acceptance_basis IS NULL, 'null', quote(t.acceptance_basis))
       || ', not operator_supplied' AS message
FROM tags t
WHERE t.status = 'accepted' AND t.acceptance_basis IS NOT 'operator_supplied'
  AND NOT EXISTS (SELECT 1 FROM base.records b
                  WHERE b.record_type = 'tag' AND b.record_id = t.tag_slug)
