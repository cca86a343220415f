-- check: stray_file
-- severity: error
-- protects: registry/ holds only records, schemas, its own README.md and generated views, so nothing there is silently ignored
-- repair: move the file out of registry/ (a README.md belongs at the registry root only), or rename it to <ID>.json if it is a record (note the lower-case .json)
-- scope: record
-- reported: registry/notes.txt, or a JSON file under registry/schemas/ that is not a schema
-- passes: registry/README.md and the generated views (registry/*.csv, registry/INDEX.md)
SELECT NULL AS record_type, NULL AS record_id, path AS file, '' AS field,
       'stray file under registry/: not a record (.json), schema, registry/README.md or generated view'
       AS message
FROM files
WHERE kind = 'stray'
