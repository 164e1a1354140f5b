CREATE TABLE `idempotency_keys` (
	`owner` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` integer,
	`headers` text,
	`body` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`owner`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
ALTER TABLE `items` ADD `lease_id` text;--> statement-breakpoint
ALTER TABLE `items` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `items` ADD `available_at` integer;--> statement-breakpoint
CREATE INDEX `item_events_user` ON `item_events` (`user_id`,`id`);