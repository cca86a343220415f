-- check: artifact_path
-- severity: error
-- protects: every path field is a safe repository-relative path to an existing file inside the repository (symlinks resolved)
-- repair: correct the path, add the missing artifact, or replace a symlink that leads outside with the file itself
-- record_problems: unsafe_path
-- reported: a path field of ../outside.md, /etc/passwd, a missing file, or a symlink that leads out of the repository
-- passes: a symlink to another file inside the repository, or a path with ./ segments that stays inside
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'artifact_path'
UNION ALL
SELECT r.record_type, r.record_id, r.file, r.artifact_field AS field,
       r.artifact_field || ' must name an existing file inside the repository: ' || a.path
       || CASE a.status
            WHEN 'missing' THEN ' does not exist'
            WHEN 'escapes' THEN ' leads outside the repository through a symlink'
            WHEN 'hidden' THEN ' leads into .git or another dot-directory (or onto a dot-file '
                               || 'through a symlink), which the index never reads'
            WHEN 'ignored' THEN ' is ignored by git (.gitignore): it would not be committed, '
                                || 'and its content is never read'
            WHEN 'unreadable' THEN ' cannot be read (make it readable)'
            ELSE ' is not a regular file'
          END AS message
FROM records r JOIN artifacts a ON a.path = r.artifact_path
WHERE a.status IN ('missing', 'escapes', 'hidden', 'ignored', 'not_a_file', 'unreadable')
