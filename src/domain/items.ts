import { AppError, notFound } from '../errors'
import { sniffImageType } from '../storage/images'
import { hasScope, requireScope, requireSession, type Caller } from './caller'
import type { Deps } from './deps'
import { newId } from './ids'
import { AS_ITEMS, type ItemReader, type ListQuery } from './item-pages'
import {
  ITEM_COLUMNS,
  toItemRecord,
  type ExtractionStatus,
  type Item,
  type ItemRecord,
  type ItemType,
  type ItemWithImage,
  type RequestedAction,
  type WorkflowStatus,
} from './item'
import { decodeCursor, type Page } from './page'
import { LIMITS, filterTags, normalizeTags, pageLimit, text } from './rules'
import { tagSignatureSql } from './tag-signature'

/** The items list's filters (CONTRACT 3). `tags` holds `tag` and `tags` combined: all must match. */
export interface ItemFilter {
  type?: ItemType
  status?: ExtractionStatus
  tags?: string[]
  cursor?: string
  limit?: number
}

/** A new item. Absent or null fields take their defaults; the image's bytes say what it is. */
export interface NewItem {
  type: ItemType
  status?: ExtractionStatus | null
  workflowStatus?: WorkflowStatus | null
  title?: string | null
  summary?: string | null
  actionNote?: string | null
  tags?: string[] | null
  requestedAction?: RequestedAction | null
  destinationKind?: string | null
  destinationName?: string | null
  image?: Uint8Array
}

/**
 * Recent items, newest first. The keyset is a row-value comparison on (created_at, id), so
 * every page costs what the first costs. Tag filters read the tag index, which holds the same
 * keyset order (see below). `as` chooses how the page is read: domain Items by default, or
 * rendered by the database (`AS_JSON` for REST, `AS_GRAPHQL_VALUES` for GraphQL).
 */
export async function listItems<P = Page<Item>>(
  deps: Deps,
  caller: Caller,
  filter: ItemFilter,
  as: ItemReader<P> = AS_ITEMS as unknown as ItemReader<P>,
): Promise<P> {
  requireScope(caller, 'read_items')
  const limit = pageLimit(filter.limit)
  const tags = filterTags(filter.tags)
  const cursor = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor)
  const params: ListQuery['params'] = { uid: caller.userId }
  const q: ListQuery = { from: 'items', where: [], params, limit }
  if (tags.length === 0) {
    q.where.push('user_id = :uid')
    if (cursor) q.where.push('(created_at, id) < (:cat, :cat_id)')
    q.order = 'created_at DESC, id DESC'
  } else {
    // One tag's index drives the walk in keyset order: the rarest of them for this user
    // (`tag_counts`; a tag nobody holds first, which ends the walk at once). The others: the
    // signature rules out, inside the index, every item that cannot have them
    // (src/domain/tag-signature.ts), then each remaining item is checked by its (item, tag) key.
    q.from = 'item_tags t JOIN items i ON i.id = t.item_id'
    q.alias = 'i'
    q.where.push('t.user_id = :uid')
    if (tags.length === 1) {
      q.where.push('t.tag = :tag0')
    } else {
      params.tags = JSON.stringify(tags)
      q.where.push(
        `t.tag = (SELECT j.value FROM json_each(:tags) j LEFT JOIN tag_counts c ON c.user_id = :uid AND c.tag = j.value
                  ORDER BY coalesce(c.items, 0), j.key LIMIT 1)`,
        `(t.tags_signature IS NULL OR (t.tags_signature | ${tagSignatureSql(':tags')}) = t.tags_signature)`,
      )
    }
    if (cursor) q.where.push('(t.created_at, t.item_id) < (:cat, :cat_id)')
    tags.forEach((tag, n) => {
      params[`tag${n}`] = tag
      if (tags.length > 1)
        q.where.push(
          `(t.tag = :tag${n} OR EXISTS (SELECT 1 FROM item_tags t2 WHERE t2.item_id = t.item_id AND t2.tag = :tag${n}))`,
        )
    })
    q.order = 't.created_at DESC, t.item_id DESC'
  }
  const col = (c: string) => (q.alias ? `${q.alias}.${c}` : c)
  if (filter.type) q.where.push(`${col('type')} = :type`), (params.type = filter.type)
  if (filter.status) q.where.push(`${col('status')} = :status`), (params.status = filter.status)
  if (cursor) (params.cat = cursor.createdAt), (params.cat_id = cursor.id)
  return as.read(deps, caller, deps.clock.now(), q)
}

/** Reads one of the caller's items; another user's id answers exactly like an unknown one. */
export async function findItemRecord(
  deps: Deps,
  caller: Caller,
  id: string,
  now = deps.clock.now(),
): Promise<ItemRecord> {
  if (id.length > 100) throw notFound()
  const [row] = await deps.db.$rows(
    `SELECT ${ITEM_COLUMNS} FROM items WHERE id = ? AND user_id = ?`,
    [id, caller.userId],
  )
  if (!row) throw notFound()
  return toItemRecord(row, caller, now)
}

const withImage = (deps: Deps, record: ItemRecord, now: number): ItemWithImage => ({
  ...record.item,
  sourceImageUrl: record.image
    ? deps.images.signedUrl(record.image.key, record.image.type, now)
    : null,
})

/** One item with its signed image URL (null without an image). */
export async function getItem(deps: Deps, caller: Caller, id: string): Promise<ItemWithImage> {
  requireScope(caller, 'read_items')
  const now = deps.clock.now()
  return withImage(deps, await findItemRecord(deps, caller, id, now), now)
}

/** Signed image links for several of the caller's items in one query (null without an image). */
export async function imageLinks(
  deps: Deps,
  caller: Caller,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  requireScope(caller, 'read_items')
  const links = new Map<string, string | null>(ids.map((id) => [id, null]))
  if (ids.length === 0) return links
  const now = deps.clock.now()
  const rows = await deps.db.$query(
    `SELECT id, image_key, image_type FROM items WHERE user_id = ? AND image_key IS NOT NULL AND id IN (${ids.map(() => '?').join(', ')})`,
    [caller.userId, ...ids],
  )
  for (const r of rows)
    links.set(String(r.id), deps.images.signedUrl(String(r.image_key), String(r.image_type), now))
  return links
}

/** Saves a new item for the signed-in user (session only), with an optional image. */
export async function createItem(
  deps: Deps,
  caller: Caller,
  input: NewItem,
): Promise<ItemWithImage> {
  requireSession(caller)
  const now = deps.clock.now()
  const title = text('title', input.title, LIMITS.title)
  const summary = text('summary', input.summary, LIMITS.summary)
  const actionNote = text('actionNote', input.actionNote, LIMITS.note)
  const hasContent = title !== null || summary !== null || actionNote !== null
  // Content given means extraction already happened; an image alone waits for extraction.
  const status: ExtractionStatus =
    input.status ?? (hasContent || !input.image ? 'extracted' : 'queued')
  const tags = normalizeTags('tags', input.tags)
  const destinationKind = text('destinationKind', input.destinationKind, LIMITS.destination)
  const destinationName = text('destinationName', input.destinationName, LIMITS.destination)

  const id = newId('itm', now)
  let image: { key: string; type: string } | null = null
  if (input.image) {
    const max = deps.limits.uploadBytes
    if (input.image.byteLength > max) {
      throw new AppError('payload_too_large', `The image must be at most ${max} bytes.`, {
        max_bytes: max,
      })
    }
    const type = sniffImageType(input.image)
    if (!type)
      throw new AppError('unsupported_media_type', 'The image must be PNG, JPEG, WebP or GIF.')
    image = { key: `${id}.${type.split('/')[1]}`, type }
    // Written before the row: a crash between the two leaves an orphan file, never a row whose image is missing.
    await deps.images.put(image.key, input.image, type)
  }

  const tagsJson = JSON.stringify(tags)
  const bytes = input.image?.byteLength ?? 0
  const p = {
    id,
    uid: caller.userId,
    now,
    bytes,
    maxItems: deps.limits.maxItemsPerUser,
    maxBytes: deps.limits.maxImageBytesPerUser,
  }
  // The quota is one conditional UPDATE of the user's counters in the same transaction as the
  // item: two creations at once cannot both take the last place or the last bytes.
  const passed = 'EXISTS (SELECT 1 FROM users WHERE id = :uid AND quota_mark = :id)'
  const results = await deps.db.$batch([
    {
      sql: 'INSERT INTO users (id, created_at) VALUES (:uid, :now) ON CONFLICT DO NOTHING',
      args: p,
    },
    {
      sql: `UPDATE users SET item_count = item_count + 1, image_bytes = image_bytes + :bytes, quota_mark = :id
            WHERE id = :uid AND item_count < :maxItems AND image_bytes + :bytes <= :maxBytes`,
      args: p,
    },
    {
      sql: `INSERT INTO items (id, user_id, type, status, workflow_status, title, summary, action_note, tags,
              requested_action, destination_kind, destination_name, image_key, image_type, image_bytes, created_at, updated_at)
            SELECT :id, :uid, :type, :status, :ws, :title, :summary, :note, :tags, :ra, :dk, :dn, :key, :itype, :ibytes, :now, :now
            WHERE ${passed}`,
      args: {
        ...p,
        type: input.type,
        status,
        ws: input.workflowStatus ?? 'pending',
        title,
        summary,
        note: actionNote,
        tags: tagsJson,
        ra: input.requestedAction ?? null,
        dk: destinationKind,
        dn: destinationName,
        key: image?.key ?? null,
        itype: image?.type ?? null,
        ibytes: image ? bytes : null,
      },
    },
    {
      sql: `INSERT INTO item_tags (item_id, user_id, tag, created_at, tags_signature)
            SELECT :id, :uid, value, :now, ${tagSignatureSql(':tags')} FROM json_each(:tags) WHERE ${passed}`,
      args: { ...p, tags: tagsJson },
    },
    // The change log's `created` record (not part of the workflow history).
    {
      sql: `INSERT INTO item_events (item_id, user_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note)
            SELECT :id, :uid, :now, 'user', :uid, NULL, 'created', NULL, NULL, NULL WHERE ${passed}`,
      args: p,
    },
  ])
  if (!results[1]?.rowsAffected) {
    if (image) await deps.images.delete(image.key).catch(() => {})
    throw new AppError(
      'quota_exceeded',
      'This account has reached its quota of items or of image bytes.',
      {
        max_items: p.maxItems,
        max_image_bytes: p.maxBytes,
      },
    )
  }
  deps.changes.poke()
  return withImage(deps, await findItemRecord(deps, caller, id, now), now)
}

/**
 * What a change answers with. A token that may write but not read (no `read_items`) learns only
 * the workflow state it changed, never the item's contents.
 */
export function visibleItem(caller: Caller, item: Item): Item {
  if (hasScope(caller, 'read_items')) return item
  return {
    ...item,
    title: null,
    summary: null,
    actionNote: null,
    resolutionNote: null,
    tags: [],
    destinationKind: null,
    destinationName: null,
  }
}

/**
 * Deletes one of the signed-in owner's items with its tags, history and stored image. The change
 * log keeps one `deleted` record, written in the same transaction; its `to` keeps the item's
 * requested action, so inbox streams still learn that an inbox item went away.
 */
export async function deleteItem(deps: Deps, caller: Caller, id: string): Promise<void> {
  requireSession(caller)
  const now = deps.clock.now()
  const mine = 'id = :id AND user_id = :uid'
  const p = { id, uid: caller.userId, now }
  const results = await deps.db.$batch([
    // The quota counters give back the item and its image's bytes.
    {
      sql: `UPDATE users SET item_count = max(item_count - 1, 0),
                image_bytes = max(image_bytes - (SELECT coalesce(image_bytes, 0) FROM items WHERE ${mine}), 0)
              WHERE id = :uid AND EXISTS (SELECT 1 FROM items WHERE ${mine})`,
      args: p,
    },
    // Only while the item exists: a repeated delete must not erase the `deleted` record.
    {
      sql: `DELETE FROM item_events WHERE item_id = :id AND user_id = :uid AND EXISTS (SELECT 1 FROM items WHERE ${mine})`,
      args: p,
    },
    {
      sql: `INSERT INTO item_events (item_id, user_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note)
              SELECT id, user_id, :now, 'user', user_id, NULL, 'deleted', NULL, requested_action, NULL FROM items WHERE ${mine}`,
      args: p,
    },
    { sql: 'DELETE FROM item_tags WHERE item_id = :id AND user_id = :uid', args: p },
    { sql: `DELETE FROM items WHERE ${mine} RETURNING image_key`, args: p },
  ])
  const deleted = results[4]?.rows[0]
  if (!deleted) throw notFound()
  // After the commit: a crash in between leaves an orphan file, never a row whose image is gone.
  const imageKey = (deleted as unknown[])[0]
  if (imageKey) await deps.images.delete(String(imageKey)).catch(() => {})
}
