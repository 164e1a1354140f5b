-- Custom migration (drizzle-kit generate --custom): the triggers that keep `items.doc` (REST's
-- rendering, 0007) render it as the whole REST item as it reads while no lease is live: the
-- caller-independent fields, then the claim fields of an available item, always last and always
-- this exact text (AVAILABLE_TAIL in src/domain/item-pages.ts):
--   ,"claim_status":"available","claimed_by":null,"lease_expires_at":null,"lease_id":null}
-- In the same UPDATE they keep `items.gql`: GraphQL's rendering of the same fields, each
-- field's JSON value (enums in capitals, timestamps as ISO 8601)
-- separated by U+001F, in this order: id, type, status, workflowStatus, title, summary,
-- actionNote, resolutionNote, tags, requestedAction, destinationKind, destinationName, attempts,
-- availableAt, createdAt, updatedAt (GRAPHQL_VALUES in src/domain/item-pages.ts), then the claim
-- values of an item no lease holds, always this exact text (GRAPHQL_AVAILABLE_TAIL):
--   U+001F "AVAILABLE" U+001F null U+001F null U+001F null U+001F null U+001F null
-- A GraphQL page is assembled from these values by key (src/graphql/list-fast-path.ts); a read
-- replaces that tail for an item whose lease is live.
DROP TRIGGER `items_doc_insert`;
--> statement-breakpoint
DROP TRIGGER `items_doc_update`;
--> statement-breakpoint
CREATE TRIGGER `items_doc_insert` AFTER INSERT ON `items` BEGIN
  UPDATE `items` SET `doc` = json_object(
    'id', NEW.id,
    'type', NEW.type,
    'status', NEW.status,
    'workflow_status', NEW.workflow_status,
    'title', NEW.title,
    'summary', NEW.summary,
    'action_note', NEW.action_note,
    'resolution_note', NEW.resolution_note,
    'tags', json(NEW.tags),
    'requested_action', NEW.requested_action,
    'destination_kind', NEW.destination_kind,
    'destination_name', NEW.destination_name,
    'attempts', NEW.attempts,
    'available_at', CASE WHEN NEW.available_at IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', NEW.available_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.available_at % 1000) || 'Z' END,
    'created_at', CASE WHEN NEW.created_at IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', NEW.created_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.created_at % 1000) || 'Z' END,
    'updated_at', CASE WHEN NEW.updated_at IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', NEW.updated_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.updated_at % 1000) || 'Z' END,
    'claim_status', 'available',
    'claimed_by', NULL,
    'lease_expires_at', NULL,
    'lease_id', NULL
  ),
  `gql` = json_quote(NEW.id)
    || char(31) || json_quote(upper(NEW.type))
    || char(31) || json_quote(upper(NEW.status))
    || char(31) || json_quote(upper(NEW.workflow_status))
    || char(31) || json_quote(NEW.title)
    || char(31) || json_quote(NEW.summary)
    || char(31) || json_quote(NEW.action_note)
    || char(31) || json_quote(NEW.resolution_note)
    || char(31) || json(NEW.tags)
    || char(31) || json_quote(upper(NEW.requested_action))
    || char(31) || json_quote(NEW.destination_kind)
    || char(31) || json_quote(NEW.destination_name)
    || char(31) || json_quote(NEW.attempts)
    || char(31) || CASE WHEN NEW.available_at IS NULL THEN 'null' ELSE '"' || strftime('%Y-%m-%dT%H:%M:%S', NEW.available_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.available_at % 1000) || 'Z' || '"' END
    || char(31) || '"' || strftime('%Y-%m-%dT%H:%M:%S', NEW.created_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.created_at % 1000) || 'Z' || '"'
    || char(31) || '"' || strftime('%Y-%m-%dT%H:%M:%S', NEW.updated_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.updated_at % 1000) || 'Z' || '"'
    || char(31) || '"AVAILABLE"' || char(31) || 'null' || char(31) || 'null' || char(31) || 'null' || char(31) || 'null' || char(31) || 'null'
  WHERE rowid = NEW.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `items_doc_update` AFTER UPDATE OF `type`, `status`, `workflow_status`, `title`, `summary`, `action_note`, `resolution_note`, `tags`, `requested_action`, `destination_kind`, `destination_name`, `attempts`, `available_at`, `created_at`, `updated_at` ON `items` BEGIN
  UPDATE `items` SET `doc` = json_object(
    'id', NEW.id,
    'type', NEW.type,
    'status', NEW.status,
    'workflow_status', NEW.workflow_status,
    'title', NEW.title,
    'summary', NEW.summary,
    'action_note', NEW.action_note,
    'resolution_note', NEW.resolution_note,
    'tags', json(NEW.tags),
    'requested_action', NEW.requested_action,
    'destination_kind', NEW.destination_kind,
    'destination_name', NEW.destination_name,
    'attempts', NEW.attempts,
    'available_at', CASE WHEN NEW.available_at IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', NEW.available_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.available_at % 1000) || 'Z' END,
    'created_at', CASE WHEN NEW.created_at IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', NEW.created_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.created_at % 1000) || 'Z' END,
    'updated_at', CASE WHEN NEW.updated_at IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', NEW.updated_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.updated_at % 1000) || 'Z' END,
    'claim_status', 'available',
    'claimed_by', NULL,
    'lease_expires_at', NULL,
    'lease_id', NULL
  ),
  `gql` = json_quote(NEW.id)
    || char(31) || json_quote(upper(NEW.type))
    || char(31) || json_quote(upper(NEW.status))
    || char(31) || json_quote(upper(NEW.workflow_status))
    || char(31) || json_quote(NEW.title)
    || char(31) || json_quote(NEW.summary)
    || char(31) || json_quote(NEW.action_note)
    || char(31) || json_quote(NEW.resolution_note)
    || char(31) || json(NEW.tags)
    || char(31) || json_quote(upper(NEW.requested_action))
    || char(31) || json_quote(NEW.destination_kind)
    || char(31) || json_quote(NEW.destination_name)
    || char(31) || json_quote(NEW.attempts)
    || char(31) || CASE WHEN NEW.available_at IS NULL THEN 'null' ELSE '"' || strftime('%Y-%m-%dT%H:%M:%S', NEW.available_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.available_at % 1000) || 'Z' || '"' END
    || char(31) || '"' || strftime('%Y-%m-%dT%H:%M:%S', NEW.created_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.created_at % 1000) || 'Z' || '"'
    || char(31) || '"' || strftime('%Y-%m-%dT%H:%M:%S', NEW.updated_at / 1000, 'unixepoch') || '.' || printf('%03d', NEW.updated_at % 1000) || 'Z' || '"'
    || char(31) || '"AVAILABLE"' || char(31) || 'null' || char(31) || 'null' || char(31) || 'null' || char(31) || 'null' || char(31) || 'null'
  WHERE rowid = NEW.rowid;
END;
--> statement-breakpoint
-- Existing rows: touch a watched column to its own value, so the trigger renders them.
UPDATE `items` SET `updated_at` = `updated_at`;
