-- Custom migration (drizzle-kit generate --custom): the quota counters start from what exists.
-- Sizes of images stored before this migration are unknown, so they count as 0 bytes.
UPDATE `users` SET `item_count` = (SELECT count(*) FROM `items` WHERE `items`.`user_id` = `users`.`id`);
