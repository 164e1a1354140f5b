CREATE TABLE `tag_counts` (
	`user_id` text NOT NULL,
	`tag` text NOT NULL,
	`items` integer NOT NULL,
	PRIMARY KEY(`user_id`, `tag`)
);
