CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` integer NOT NULL,
	`webhook_id` text NOT NULL,
	`seq` integer NOT NULL,
	`action` text NOT NULL,
	`attempt` integer NOT NULL,
	`status` text NOT NULL,
	`response_status` integer,
	`error` text,
	`at` integer NOT NULL,
	`next_attempt_at` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_webhook` ON `webhook_attempts` (`webhook_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`webhook_id` text NOT NULL,
	`user_id` text NOT NULL,
	`seq` integer NOT NULL,
	`action` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_id` text,
	`lease_expires_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_change` ON `webhook_deliveries` (`webhook_id`,`seq`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`next_attempt_at`) WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`url` text NOT NULL,
	`actions` text DEFAULT '[]' NOT NULL,
	`description` text,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	`enabled` integer DEFAULT 1 NOT NULL,
	`disabled_reason` text,
	`failures` integer DEFAULT 0 NOT NULL,
	`enqueued_seq` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhooks_user` ON `webhooks` (`user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhooks_enqueue` ON `webhooks` (`enabled`,`enqueued_seq`);