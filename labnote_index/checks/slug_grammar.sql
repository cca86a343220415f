-- check: slug_grammar
-- severity: error
-- protects: tag slugs, topics and tag references are lowercase hyphenated slugs
-- repair: lower-case the slug and join its words with single hyphens
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'slug_grammar'
