/**
 * An item's tag signature: one bit (of 53, so the set stays a safe JavaScript integer) per tag, ORed over the item's tags, kept on each of
 * its `item_tags` rows and in the tag index. A list filtered by several tags walks the first
 * tag's index and skips, without leaving the index, every item whose signature lacks a bit of
 * the other tags; only the rest are checked exactly (a signature can only say "maybe"). Both
 * the bit and the OR are SQL, so writes, the backfill in migration 0011 and reads all compute
 * them the same way. A row without a signature (NULL) is always checked.
 */

/**
 * The bit of one tag: its length and four of its characters, mixed. Collisions only cost an
 * exact check. Stored signatures must match it: a change here needs a migration that signs every
 * row again, as 0011 did (test/tag-signature.test.ts fails until the newest one does).
 */
const tagBit = (tag: string) => {
  const char = (at: number) => `coalesce(unicode(substr(${tag}, ${at}, 1)), 0)`
  return `((length(${tag}) * 3 + ${char(1)} * 7 + ${char(2)} * 11 + ${char(-2)} * 13 + ${char(-1)} * 17) % 53)`
}

/** The signature of a JSON array of tags (a bound parameter or a column), as a SQL expression. */
export const tagSignatureSql = (jsonArray: string) =>
  `(SELECT coalesce(sum(DISTINCT 1 << ${tagBit('value')}), 0) FROM json_each(${jsonArray}))`

/** Signs every tag row from its item's tags: migration 0011 runs it, seeding scripts reuse it. */
export const signTagRowsSql = `UPDATE \`item_tags\` SET \`tags_signature\` = ${tagSignatureSql(
  '(SELECT `tags` FROM `items` WHERE `items`.`id` = `item_tags`.`item_id`)',
)}`
