// Loads a realistic demo set for one user.
//   npm run seed -- <user-id>                 about 50 items, every type, status, action and tag pattern
//   npm run seed -- <user-id> --count 100000  a large set for the benchmark (rows written in bulk)
import { loadConfig, prepareDataDir, redactDatabaseUrl } from '../src/config'
import { openDatabase, type Db } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { newId } from '../src/domain/ids'
import { EXTRACTION_STATUSES, ITEM_TYPES, REQUESTED_ACTIONS } from '../src/domain/item'
import { signTagRowsSql } from '../src/domain/tag-signature'

const TITLES = {
  event: [
    'Jazz night at the Blue Room',
    'Parent-teacher meeting',
    'Farmers market opening',
    'Dentist appointment',
    'Team offsite in Lisbon',
  ],
  media: [
    'Documentary: The Deep',
    'Podcast on sleep science',
    'Album: Night Drive',
    'Film: Paper Moons',
    'Talk: Local-first software',
  ],
  reference: [
    'Sourdough hydration chart',
    'Passport renewal checklist',
    'Bike tyre pressures',
    'Tax receipt 2026',
    'Wi-Fi password at the cabin',
  ],
} as const
const TAGS = [
  'music',
  'family',
  'kids',
  'school',
  'health',
  'travel',
  'food',
  'finance',
  'work',
  'weekend',
  'reading',
  'film',
  'home',
  'urgent',
]
const DESTINATIONS: [string, string][] = [
  ['calendar', 'Family'],
  ['calendar', 'Work'],
  ['list', 'Watch later'],
  ['list', 'Groceries'],
  ['notes', 'Recipes'],
  ['folder', 'Taxes'],
]
const NOTES = [
  'Add to the shared calendar with a reminder the day before.',
  'Ask Sam whether the 7pm slot still works.',
  'Keep for reference; no action beyond filing.',
  'Remind me on Friday morning.',
]

/** Deterministic pseudo-random numbers, so two seeds of the same size are the same data set. */
function rng(seed: number) {
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
}

export interface SeedOptions {
  userId: string
  count: number
  /** Newest item's timestamp; items are spread back in time from here. */
  now?: number
}

/** Writes `count` items for `userId` in bulk transactions. Returns the ids, oldest first. */
export async function seedItems(
  db: Db,
  { userId, count, now = Date.now() }: SeedOptions,
): Promise<number> {
  const random = rng(count + userId.length)
  const pick = <T>(xs: readonly T[]): T => {
    const x = xs[Math.floor(random() * xs.length)]
    if (x === undefined) throw new Error('pick from an empty list')
    return x
  }
  await db.$client.execute({
    sql: 'INSERT OR IGNORE INTO users (id, created_at) VALUES (?, ?)',
    args: [userId, now],
  })
  const chunk = 500
  for (let start = 0; start < count; start += chunk) {
    const itemRows: unknown[] = []
    const tagRows: unknown[] = []
    const n = Math.min(chunk, count - start)
    const chunkIds: string[] = []
    for (let i = 0; i < n; i++) {
      const index = start + i
      const createdAt = now - (count - index) * 60_000 // one item a minute, oldest first
      const type = ITEM_TYPES[index % ITEM_TYPES.length] ?? 'event'
      const id = newId('itm', createdAt)
      chunkIds.push(id)
      const tags = [
        ...new Set([pick(TAGS), pick(TAGS), ...(random() < 0.3 ? [pick(TAGS)] : [])]),
      ].slice(0, 1 + Math.floor(random() * 3))
      const action =
        random() < 0.6 ? (REQUESTED_ACTIONS[index % REQUESTED_ACTIONS.length] ?? null) : null
      const [kind, name] = action ? pick(DESTINATIONS) : [null, null]
      const status = index % 10 === 0 ? pick(EXTRACTION_STATUSES) : 'extracted'
      const workflow = action && random() < 0.3 ? 'done' : 'pending'
      itemRows.push(
        id,
        userId,
        type,
        status,
        workflow,
        `${pick(TITLES[type])} #${index + 1}`,
        `Saved from a screenshot (${type}).`,
        action ? pick(NOTES) : null,
        JSON.stringify(tags),
        action,
        kind,
        name,
        createdAt,
        createdAt,
      )
      for (const tag of tags) tagRows.push(id, userId, tag, createdAt)
    }
    const itemValues = Array.from(
      { length: n },
      () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).join(', ')
    const tagValues = Array.from({ length: tagRows.length / 4 }, () => '(?, ?, ?, ?)').join(', ')
    await db.$client.batch(
      [
        {
          sql: `INSERT INTO items (id, user_id, type, status, workflow_status, title, summary, action_note, tags,
                requested_action, destination_kind, destination_name, created_at, updated_at) VALUES ${itemValues}`,
          args: itemRows as never,
        },
        {
          sql: `INSERT INTO item_tags (item_id, user_id, tag, created_at) VALUES ${tagValues}`,
          args: tagRows as never,
        },
        // The tag signatures, as the API writes them (src/domain/tag-signature.ts).
        {
          sql: `${signTagRowsSql} WHERE item_id IN (SELECT value FROM json_each(?))`,
          args: [JSON.stringify(chunkIds)],
        },
      ],
      'write',
    )
  }
  return count
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const userId = args[0]
  const countFlag = args.indexOf('--count')
  const count = countFlag >= 0 ? Number(args[countFlag + 1]) : 50
  if (!userId || userId.startsWith('-') || !Number.isInteger(count) || count < 1) {
    console.error('usage: npm run seed -- <user-id> [--count N]')
    process.exit(2)
  }
  prepareDataDir()
  const config = loadConfig()
  const db = await openDatabase(config.database)
  await migrateDatabase(db)
  const started = performance.now()
  await seedItems(db, { userId, count })
  console.log(
    `seeded ${count} items for ${userId} into ${redactDatabaseUrl(config.database.url)} in ${Math.round(performance.now() - started)} ms`,
  )
  db.$client.close()
}
