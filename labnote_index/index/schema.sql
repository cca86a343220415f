-- Written by `make schema` from index/schema.py (define_tables); never by hand.
CREATE TABLE "files" (
   "path" TEXT PRIMARY KEY,
   "kind" TEXT,
   "size" INTEGER,
   "mtime_ns" INTEGER,
   "ctime_ns" INTEGER,
   "inode" INTEGER,
   "regular_file" INTEGER,
   "sha256" TEXT,
   "text_sha256" TEXT,
   "record_type" TEXT,
   "error" TEXT
);
CREATE TABLE "artifacts" (
   "path" TEXT PRIMARY KEY,
   "dir" TEXT NOT NULL,
   "status" TEXT,
   "size" INTEGER,
   "mtime_ns" INTEGER,
   "ctime_ns" INTEGER,
   "inode" INTEGER,
   "sha256" TEXT,
   "links" INTEGER,
   "body" TEXT,
   "regular_file" INTEGER
);
CREATE TABLE "markdown_reads" (
   "path" TEXT,
   "dir" TEXT,
   "inode" INTEGER,
   "size" INTEGER,
   "sha256" TEXT,
   "links" INTEGER,
   "body" TEXT
);
CREATE TABLE "build_info" (
   "key" TEXT PRIMARY KEY,
   "value" TEXT
);
CREATE TABLE "record_json" (
   "file" TEXT PRIMARY KEY REFERENCES "files"("path"),
   "json" TEXT
);
CREATE TABLE "handoff_json" (
   "file" TEXT PRIMARY KEY REFERENCES "files"("path"),
   "json" TEXT
);
CREATE TABLE "generated_views" (
   "path" TEXT PRIMARY KEY,
   "sha256" TEXT,
   "content" TEXT
);
CREATE TABLE "records" (
   "file" TEXT PRIMARY KEY REFERENCES "files"("path"),
   "record_type" TEXT,
   "record_id" TEXT,
   "created_at" TEXT,
   "status" TEXT,
   "artifact_field" TEXT,
   "artifact_path" TEXT REFERENCES "artifacts"("path"),
   "valid" INTEGER,
   "unreadable" INTEGER,
   "layout_enforced" INTEGER,
   "registry_dir" TEXT,
   "parent_dir" TEXT,
   "sub_dir" TEXT,
   "stem" TEXT
);
CREATE TABLE "packets" (
   "file" TEXT PRIMARY KEY REFERENCES "records"("file"),
   "packet_id" TEXT,
   "status" TEXT,
   "topic" TEXT,
   "created_at" TEXT,
   "content_origin" TEXT,
   "source_refs" TEXT,
   "source_note" TEXT,
   "derivative_of" TEXT,
   "provenance_coverage" TEXT,
   "created_by" TEXT,
   "deposited_by" TEXT,
   "source_session" TEXT,
   "target_session" TEXT,
   "path" TEXT,
   "response_expected" INTEGER,
   "response_packet_id" TEXT,
   "tags" TEXT,
   "notes" TEXT,
   "record_type" TEXT,
   "schema_version" INTEGER,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "responses" (
   "file" TEXT PRIMARY KEY REFERENCES "records"("file"),
   "response_id" TEXT,
   "status" TEXT,
   "created_at" TEXT,
   "content_origin" TEXT,
   "source_refs" TEXT,
   "source_note" TEXT,
   "derivative_of" TEXT,
   "provenance_coverage" TEXT,
   "created_by" TEXT,
   "deposited_by" TEXT,
   "responding_session" TEXT,
   "source_packet_id" TEXT,
   "path" TEXT,
   "accepted_by" TEXT,
   "decision_at" TEXT,
   "tags" TEXT,
   "notes" TEXT,
   "record_type" TEXT,
   "schema_version" INTEGER,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "messages" (
   "file" TEXT PRIMARY KEY REFERENCES "records"("file"),
   "message_id" TEXT,
   "status" TEXT,
   "summary" TEXT,
   "created_at" TEXT,
   "from_visitor_id" TEXT,
   "to_visitor_id" TEXT,
   "to_group" TEXT,
   "path" TEXT,
   "tags" TEXT,
   "reply_to" TEXT,
   "reply_expected" INTEGER,
   "response_message_id" TEXT,
   "needs_human_relay" INTEGER,
   "related_packet" TEXT,
   "related_response" TEXT,
   "notes" TEXT,
   "record_type" TEXT,
   "schema_version" INTEGER,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "notifications" (
   "file" TEXT PRIMARY KEY REFERENCES "records"("file"),
   "notification_id" TEXT,
   "status" TEXT,
   "summary" TEXT,
   "created_at" TEXT,
   "from_visitor_id" TEXT,
   "to_visitor_id" TEXT,
   "message_id" TEXT,
   "path" TEXT,
   "needs_human_action" INTEGER,
   "notes" TEXT,
   "record_type" TEXT,
   "schema_version" INTEGER,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "visits" (
   "file" TEXT PRIMARY KEY REFERENCES "records"("file"),
   "visit_id" TEXT,
   "created_at" TEXT,
   "visitor_id" TEXT,
   "session_family" TEXT,
   "checked_messages" INTEGER,
   "answered_messages" INTEGER,
   "created_messages" INTEGER,
   "relay_needed" INTEGER,
   "signoff_path" TEXT,
   "notes" TEXT,
   "record_type" TEXT,
   "schema_version" INTEGER,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "visitors" (
   "file" TEXT PRIMARY KEY REFERENCES "records"("file"),
   "visitor_id" TEXT,
   "status" TEXT,
   "display_name" TEXT,
   "created_at" TEXT,
   "session_family" TEXT,
   "session_type" TEXT,
   "last_seen" TEXT,
   "profile_path" TEXT,
   "notes" TEXT,
   "record_type" TEXT,
   "schema_version" INTEGER,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "tags" (
   "file" TEXT PRIMARY KEY REFERENCES "records"("file"),
   "tag_slug" TEXT,
   "status" TEXT,
   "display_name" TEXT,
   "created_at" TEXT,
   "scope" TEXT,
   "description" TEXT,
   "created_by" TEXT,
   "accepted_by" TEXT,
   "accepted_at" TEXT,
   "acceptance_basis" TEXT,
   "notes" TEXT,
   "record_type" TEXT,
   "schema_version" INTEGER,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "refs" (
   "id" INTEGER PRIMARY KEY,
   "source_file" TEXT REFERENCES "records"("file"),
   "source_type" TEXT,
   "source_id" TEXT,
   "field" TEXT,
   "position" INTEGER,
   "target_id" TEXT,
   "target_file" TEXT REFERENCES "records"("file")
);
CREATE TABLE "tag_uses" (
   "id" INTEGER PRIMARY KEY,
   "source_file" TEXT REFERENCES "records"("file"),
   "source_type" TEXT,
   "source_id" TEXT,
   "position" INTEGER,
   "tag_slug" TEXT,
   "tag_file" TEXT REFERENCES "tags"("file")
);
CREATE TABLE "source_refs" (
   "id" INTEGER PRIMARY KEY,
   "source_file" TEXT REFERENCES "records"("file"),
   "source_type" TEXT,
   "source_id" TEXT,
   "position" INTEGER,
   "ref" TEXT
);
CREATE TABLE "validation_errors" (
   "id" INTEGER PRIMARY KEY,
   "file" TEXT REFERENCES "files"("path"),
   "record_type" TEXT,
   "record_id" TEXT,
   "field" TEXT,
   "error_type" TEXT,
   "message" TEXT
);
CREATE TABLE "legacy_fields" (
   "id" INTEGER PRIMARY KEY,
   "file" TEXT REFERENCES "files"("path"),
   "record_type" TEXT,
   "record_id" TEXT,
   "legacy_field" TEXT,
   "canonical_field" TEXT,
   "note" TEXT
);
CREATE TABLE "markdown_links" (
   "id" INTEGER PRIMARY KEY,
   "source_file" TEXT REFERENCES "files"("path"),
   "line" INTEGER,
   "column" INTEGER,
   "raw_target" TEXT,
   "target" TEXT
);
CREATE TABLE "link_targets" (
   "path" TEXT PRIMARY KEY,
   "dir" TEXT NOT NULL,
   "status" TEXT,
   "regular_file" INTEGER,
   "ctime_ns" INTEGER
);
CREATE TABLE "cycle_members" (
   "relation" TEXT,
   "node" TEXT,
   "cycle" INTEGER,
   PRIMARY KEY ("relation", "node")
);
CREATE TABLE "handoff_packets" (
   "packet_dir" TEXT PRIMARY KEY,
   "manifest" TEXT REFERENCES "files"("path"),
   "dir_role" TEXT,
   "dir_milestone" TEXT,
   "dir_packet_version" TEXT,
   "role" TEXT,
   "milestone" TEXT,
   "packet_version" TEXT,
   "status" TEXT,
   "created_at" TEXT,
   "updated_at" TEXT,
   "summary" TEXT,
   "version_number" INTEGER,
   "schema_version" TEXT,
   "blocked" INTEGER,
   "handoff_to" TEXT,
   "return_to" TEXT,
   "source_scopes" TEXT,
   "open_questions" TEXT,
   "required_confirmations" TEXT,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "handoff_templates" (
   "manifest" TEXT PRIMARY KEY REFERENCES "files"("path"),
   "dir_role" TEXT,
   "role" TEXT,
   "milestone" TEXT,
   "packet_version" TEXT,
   "status" TEXT,
   "summary" TEXT,
   "schema_version" TEXT,
   "documents" TEXT,
   "handoff_to" TEXT,
   "return_to" TEXT,
   "extra" TEXT,
   "valid" INTEGER
);
CREATE TABLE "handoff_files" (
   "id" INTEGER PRIMARY KEY,
   "packet_dir" TEXT REFERENCES "handoff_packets"("packet_dir"),
   "path" TEXT,
   "size" INTEGER,
   "mtime_ns" INTEGER,
   "ctime_ns" INTEGER,
   "inode" INTEGER,
   "sha256" TEXT,
   "error" TEXT
);
CREATE TABLE "handoff_documents" (
   "id" INTEGER PRIMARY KEY,
   "packet_dir" TEXT REFERENCES "handoff_packets"("packet_dir"),
   "position" INTEGER,
   "path" TEXT,
   "type" TEXT,
   "required" INTEGER,
   "description" TEXT,
   "exists" INTEGER,
   "sha256" TEXT
);
CREATE TABLE "input_packets" (
   "id" INTEGER PRIMARY KEY,
   "consumer" TEXT REFERENCES "handoff_packets"("packet_dir"),
   "position" INTEGER,
   "role" TEXT,
   "milestone" TEXT,
   "packet_version" TEXT,
   "manifest" TEXT,
   "status_at_consumption" TEXT,
   "consumption_status" TEXT,
   "extra" TEXT,
   "upstream" TEXT REFERENCES "handoff_packets"("packet_dir")
);
CREATE TABLE "packet_locks" (
   "lock_file" TEXT PRIMARY KEY REFERENCES "files"("path"),
   "packet_dir" TEXT REFERENCES "handoff_packets"("packet_dir"),
   "role" TEXT,
   "milestone" TEXT,
   "packet_version" TEXT,
   "status" TEXT,
   "schema_version" TEXT,
   "extra" TEXT
);
CREATE TABLE "locked_files" (
   "id" INTEGER PRIMARY KEY,
   "lock_file" TEXT REFERENCES "packet_locks"("lock_file"),
   "packet_dir" TEXT,
   "path" TEXT,
   "recorded_sha256" TEXT,
   "current_sha256" TEXT
);
CREATE TABLE "record_types" (
   "record_type" TEXT PRIMARY KEY,
   "table_name" TEXT,
   "id_field" TEXT,
   "id_grammar" TEXT,
   "directory" TEXT,
   "sub_directory" TEXT,
   "artifact_field" TEXT,
   "artifact_prefix" TEXT
);
CREATE TABLE "status_buckets" (
   "record_type" TEXT,
   "status" TEXT,
   "bucket" TEXT,
   PRIMARY KEY ("record_type", "status")
);
CREATE TABLE "handoff_statuses" (
   "status" TEXT PRIMARY KEY,
   "rank" INTEGER
);
CREATE TABLE "status_transitions" (
   "record_type" TEXT,
   "from_status" TEXT,
   "to_status" TEXT,
   PRIMARY KEY ("record_type", "from_status", "to_status")
);
CREATE TABLE "validation_checks" (
   "error_type" TEXT,
   "family" TEXT,
   "check_id" TEXT,
   PRIMARY KEY ("error_type", "family")
);
CREATE TABLE "reference_rules" (
   "source_type" TEXT,
   "field" TEXT,
   "target_type" TEXT,
   "many" INTEGER,
   PRIMARY KEY ("source_type", "field", "target_type")
);
INSERT INTO "handoff_statuses" VALUES('draft',0);
INSERT INTO "handoff_statuses" VALUES('blocked',0);
INSERT INTO "handoff_statuses" VALUES('ready_for_next_role',1);
INSERT INTO "handoff_statuses" VALUES('superseded',2);
INSERT INTO "record_types" VALUES('packet','packets','packet_id','artifact_id','packets','year','path','datadrops/');
INSERT INTO "record_types" VALUES('response','responses','response_id','artifact_id','responses','year','path','responses/');
INSERT INTO "record_types" VALUES('message','messages','message_id','artifact_id','messages','bucket','path','messages/{bucket}/');
INSERT INTO "record_types" VALUES('notification','notifications','notification_id','artifact_id','notifications','bucket','path','notifications/{bucket}/');
INSERT INTO "record_types" VALUES('visit','visits','visit_id','artifact_id','visits','year','signoff_path','responses/signoffs/');
INSERT INTO "record_types" VALUES('visitor','visitors','visitor_id','visitor_id','visitors',NULL,'profile_path',NULL);
INSERT INTO "record_types" VALUES('tag','tags','tag_slug','slug','tags','status',NULL,NULL);
INSERT INTO "reference_rules" VALUES('packet','response_packet_id','response',0);
INSERT INTO "reference_rules" VALUES('response','source_packet_id','packet',0);
INSERT INTO "reference_rules" VALUES('message','reply_to','message',0);
INSERT INTO "reference_rules" VALUES('message','response_message_id','message',0);
INSERT INTO "reference_rules" VALUES('message','related_packet','packet',0);
INSERT INTO "reference_rules" VALUES('message','related_response','response',0);
INSERT INTO "reference_rules" VALUES('notification','message_id','message',0);
INSERT INTO "reference_rules" VALUES('visit','visit_id','packet',0);
INSERT INTO "reference_rules" VALUES('packet','derivative_of','packet',1);
INSERT INTO "reference_rules" VALUES('packet','derivative_of','response',1);
INSERT INTO "reference_rules" VALUES('response','derivative_of','packet',1);
INSERT INTO "reference_rules" VALUES('response','derivative_of','response',1);
INSERT INTO "status_buckets" VALUES('message','open','open');
INSERT INTO "status_buckets" VALUES('message','acknowledged','open');
INSERT INTO "status_buckets" VALUES('message','in_progress','open');
INSERT INTO "status_buckets" VALUES('message','blocked','open');
INSERT INTO "status_buckets" VALUES('message','answered','answered');
INSERT INTO "status_buckets" VALUES('message','closed','closed');
INSERT INTO "status_buckets" VALUES('message','archived','archived');
INSERT INTO "status_buckets" VALUES('notification','needed','open');
INSERT INTO "status_buckets" VALUES('notification','told_to_human','open');
INSERT INTO "status_buckets" VALUES('notification','delivered_by_human','delivered');
INSERT INTO "status_buckets" VALUES('notification','confirmed','closed');
INSERT INTO "status_buckets" VALUES('notification','cancelled','closed');
INSERT INTO "status_buckets" VALUES('tag','proposed','proposed');
INSERT INTO "status_buckets" VALUES('tag','accepted','accepted');
INSERT INTO "status_buckets" VALUES('tag','deprecated','deprecated');
INSERT INTO "status_transitions" VALUES('packet','new','in_review');
INSERT INTO "status_transitions" VALUES('packet','new','answered');
INSERT INTO "status_transitions" VALUES('packet','in_review','answered');
INSERT INTO "status_transitions" VALUES('packet','new','superseded');
INSERT INTO "status_transitions" VALUES('packet','in_review','superseded');
INSERT INTO "status_transitions" VALUES('packet','answered','superseded');
INSERT INTO "status_transitions" VALUES('packet','new','archived');
INSERT INTO "status_transitions" VALUES('packet','in_review','archived');
INSERT INTO "status_transitions" VALUES('packet','answered','archived');
INSERT INTO "status_transitions" VALUES('packet','superseded','archived');
INSERT INTO "status_transitions" VALUES('response','pending_review','accepted');
INSERT INTO "status_transitions" VALUES('response','pending_review','rejected');
INSERT INTO "status_transitions" VALUES('response','pending_review','archived');
INSERT INTO "status_transitions" VALUES('response','accepted','archived');
INSERT INTO "status_transitions" VALUES('response','rejected','archived');
INSERT INTO "status_transitions" VALUES('message','open','acknowledged');
INSERT INTO "status_transitions" VALUES('message','open','in_progress');
INSERT INTO "status_transitions" VALUES('message','open','blocked');
INSERT INTO "status_transitions" VALUES('message','open','answered');
INSERT INTO "status_transitions" VALUES('message','open','closed');
INSERT INTO "status_transitions" VALUES('message','open','archived');
INSERT INTO "status_transitions" VALUES('message','acknowledged','open');
INSERT INTO "status_transitions" VALUES('message','acknowledged','in_progress');
INSERT INTO "status_transitions" VALUES('message','acknowledged','blocked');
INSERT INTO "status_transitions" VALUES('message','acknowledged','answered');
INSERT INTO "status_transitions" VALUES('message','acknowledged','closed');
INSERT INTO "status_transitions" VALUES('message','acknowledged','archived');
INSERT INTO "status_transitions" VALUES('message','in_progress','open');
INSERT INTO "status_transitions" VALUES('message','in_progress','acknowledged');
INSERT INTO "status_transitions" VALUES('message','in_progress','blocked');
INSERT INTO "status_transitions" VALUES('message','in_progress','answered');
INSERT INTO "status_transitions" VALUES('message','in_progress','closed');
INSERT INTO "status_transitions" VALUES('message','in_progress','archived');
INSERT INTO "status_transitions" VALUES('message','blocked','open');
INSERT INTO "status_transitions" VALUES('message','blocked','acknowledged');
INSERT INTO "status_transitions" VALUES('message','blocked','in_progress');
INSERT INTO "status_transitions" VALUES('message','blocked','answered');
INSERT INTO "status_transitions" VALUES('message','blocked','closed');
INSERT INTO "status_transitions" VALUES('message','blocked','archived');
INSERT INTO "status_transitions" VALUES('message','answered','closed');
INSERT INTO "status_transitions" VALUES('message','answered','archived');
INSERT INTO "status_transitions" VALUES('message','closed','archived');
INSERT INTO "status_transitions" VALUES('notification','needed','told_to_human');
INSERT INTO "status_transitions" VALUES('notification','needed','delivered_by_human');
INSERT INTO "status_transitions" VALUES('notification','needed','confirmed');
INSERT INTO "status_transitions" VALUES('notification','told_to_human','delivered_by_human');
INSERT INTO "status_transitions" VALUES('notification','told_to_human','confirmed');
INSERT INTO "status_transitions" VALUES('notification','delivered_by_human','confirmed');
INSERT INTO "status_transitions" VALUES('notification','needed','cancelled');
INSERT INTO "status_transitions" VALUES('notification','told_to_human','cancelled');
INSERT INTO "status_transitions" VALUES('notification','delivered_by_human','cancelled');
INSERT INTO "status_transitions" VALUES('visitor','registered','active');
INSERT INTO "status_transitions" VALUES('visitor','active','dormant');
INSERT INTO "status_transitions" VALUES('visitor','dormant','active');
INSERT INTO "status_transitions" VALUES('visitor','registered','retired');
INSERT INTO "status_transitions" VALUES('visitor','registered','superseded');
INSERT INTO "status_transitions" VALUES('visitor','active','retired');
INSERT INTO "status_transitions" VALUES('visitor','active','superseded');
INSERT INTO "status_transitions" VALUES('visitor','dormant','retired');
INSERT INTO "status_transitions" VALUES('visitor','dormant','superseded');
INSERT INTO "status_transitions" VALUES('tag','proposed','accepted');
INSERT INTO "status_transitions" VALUES('tag','proposed','deprecated');
INSERT INTO "status_transitions" VALUES('tag','accepted','deprecated');
