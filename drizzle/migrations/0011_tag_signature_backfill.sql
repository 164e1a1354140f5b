-- Custom migration (drizzle-kit generate --custom): sign the tag rows written before 0010 with
-- `signTagRowsSql` of src/domain/tag-signature.ts (test/tag-signature.test.ts holds them equal).
UPDATE `item_tags` SET `tags_signature` = (SELECT coalesce(sum(DISTINCT 1 << ((length(value) * 3 + coalesce(unicode(substr(value, 1, 1)), 0) * 7 + coalesce(unicode(substr(value, 2, 1)), 0) * 11 + coalesce(unicode(substr(value, -2, 1)), 0) * 13 + coalesce(unicode(substr(value, -1, 1)), 0) * 17) % 53)), 0) FROM json_each((SELECT `tags` FROM `items` WHERE `items`.`id` = `item_tags`.`item_id`)));
