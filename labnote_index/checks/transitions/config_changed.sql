-- check: config_changed
-- severity: warning
-- protects: a change to the labnote-index configuration (which checks run, at what severity, on which files) is seen by a reviewer; under --base the base revision's configuration judged the change, so it cannot switch off the checks that judge it
-- repair: review the configuration change on its own merits; it governs checks from the revision it is merged in
-- reported: a pull request that changes labnote-index.toml's severity of a check
-- passes: a pull request that leaves the configuration file as it was
WITH
head_config AS (SELECT json_extract(value, '$.declared') AS declared,
                       json_extract(value, '$.declared_in') AS declared_in
                FROM main.build_info WHERE key = 'config'),
base_config AS (SELECT json_extract(value, '$.declared') AS declared,
                       json_extract(value, '$.declared_in') AS declared_in
                FROM base.build_info WHERE key = 'config'),
-- Each key's value as TOML would write it: true/false, not SQLite's 1/0; text quoted.
head_keys AS (SELECT j.key, j.type, j.value,
                     CASE WHEN j.type IN ('true', 'false') THEN j.type
                          WHEN j.type = 'text' THEN json_quote(j.value) ELSE j.value END AS shown
              FROM head_config, json_each(head_config.declared) j),
base_keys AS (SELECT j.key, j.type, j.value,
                     CASE WHEN j.type IN ('true', 'false') THEN j.type
                          WHEN j.type = 'text' THEN json_quote(j.value) ELSE j.value END AS shown
              FROM base_config, json_each(base_config.declared) j),
changed AS (
    SELECT k.key, b.shown AS before, h.shown AS after
    FROM (SELECT key FROM head_keys UNION SELECT key FROM base_keys) k
    LEFT JOIN head_keys h ON h.key = k.key
    LEFT JOIN base_keys b ON b.key = k.key
    WHERE h.type IS NOT b.type OR h.value IS NOT b.value
)
SELECT NULL AS record_type, NULL AS record_id,
       (SELECT coalesce(substr(declared_in, 1, instr(declared_in || ' ', ' ') - 1), '')
        FROM (SELECT declared_in FROM head_config WHERE declared_in IS NOT NULL
              UNION ALL SELECT declared_in FROM base_config WHERE declared_in IS NOT NULL)
        LIMIT 1) AS file,
       c.key AS field,
       'labnote-index configuration ' || quote(c.key) || ' changed from '
       || coalesce(c.before, '(not set)') || ' to ' || coalesce(c.after, '(not set)')
       || ' (this check ran under the base revision''s configuration)' AS message
FROM changed c
