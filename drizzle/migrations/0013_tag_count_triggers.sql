-- Custom migration (drizzle-kit generate --custom): `tag_counts` follows `item_tags` in the same
-- statement as every tag row written or deleted (item creation, tag corrections, deletion), so
-- a filter by several tags can start from the rarest (src/domain/items.ts). A count that drops
-- to zero is removed.
CREATE TRIGGER `item_tags_count_insert` AFTER INSERT ON `item_tags` BEGIN
  INSERT INTO `tag_counts` (`user_id`, `tag`, `items`) VALUES (NEW.user_id, NEW.tag, 1)
    ON CONFLICT (`user_id`, `tag`) DO UPDATE SET `items` = `items` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `item_tags_count_delete` AFTER DELETE ON `item_tags` BEGIN
  UPDATE `tag_counts` SET `items` = `items` - 1 WHERE `user_id` = OLD.user_id AND `tag` = OLD.tag;
  DELETE FROM `tag_counts` WHERE `user_id` = OLD.user_id AND `tag` = OLD.tag AND `items` <= 0;
END;
--> statement-breakpoint
-- Existing tag rows.
INSERT INTO `tag_counts` (`user_id`, `tag`, `items`)
  SELECT `user_id`, `tag`, count(*) FROM `item_tags` GROUP BY `user_id`, `tag`;
