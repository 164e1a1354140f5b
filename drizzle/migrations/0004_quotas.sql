ALTER TABLE `items` ADD `image_bytes` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `item_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `image_bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `quota_mark` text;