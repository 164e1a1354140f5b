-- Custom migration (drizzle-kit generate --custom): `items.doc` becomes the whole REST item as it
-- reads while no lease is live — the caller-independent fields plus the claim fields of an
-- available item, always last and always this exact text:
--   ,"claim_status":"available","claimed_by":null,"lease_expires_at":null,"lease_id":null}
-- A list then renders a page inside the database in one row (src/domain/item-pages.ts): an item
-- without a live claim is its stored document as it is, and only a live claim's tail is
-- replaced by the caller's view of it.
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
  )
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
  )
  WHERE rowid = NEW.rowid;
END;
--> statement-breakpoint
-- Existing rows: touch a watched column to its own value, so the trigger renders them.
UPDATE `items` SET `updated_at` = `updated_at`;
