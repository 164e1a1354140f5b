DROP INDEX `item_tags_user_tag_created`;--> statement-breakpoint
ALTER TABLE `item_tags` ADD `tags_signature` integer;--> statement-breakpoint
CREATE INDEX `item_tags_user_tag_created` ON `item_tags` (`user_id`,`tag`,`created_at`,`item_id`,`tags_signature`);