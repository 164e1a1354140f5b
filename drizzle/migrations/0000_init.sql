CREATE TABLE `agent_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`scopes` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_hint` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_tokens_hash` ON `agent_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `agent_tokens_user` ON `agent_tokens` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `item_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`item_id` text NOT NULL,
	`user_id` text NOT NULL,
	`at` integer NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_id` text NOT NULL,
	`actor_name` text,
	`action` text NOT NULL,
	`from` text,
	`to` text,
	`note` text
);
--> statement-breakpoint
CREATE INDEX `item_events_item` ON `item_events` (`item_id`,`id`);--> statement-breakpoint
CREATE TABLE `item_tags` (
	`item_id` text NOT NULL,
	`user_id` text NOT NULL,
	`tag` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`item_id`, `tag`)
);
--> statement-breakpoint
CREATE INDEX `item_tags_user_tag_created` ON `item_tags` (`user_id`,`tag`,`created_at`,`item_id`);--> statement-breakpoint
CREATE TABLE `items` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`workflow_status` text NOT NULL,
	`title` text,
	`summary` text,
	`action_note` text,
	`resolution_note` text,
	`tags` text DEFAULT '[]' NOT NULL,
	`requested_action` text,
	`destination_kind` text,
	`destination_name` text,
	`claim_kind` text,
	`claim_id` text,
	`claim_name` text,
	`lease_expires_at` integer,
	`image_key` text,
	`image_type` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`revision` text
);
--> statement-breakpoint
CREATE INDEX `items_user_created` ON `items` (`user_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `items_inbox` ON `items` (`user_id`,`workflow_status`,`created_at`,`id`) WHERE "items"."requested_action" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
