import type { InArgs } from '@libsql/client'
import type { Db } from '../db/client'
import { AppError, invalid, notFound } from '../errors'
import type { ImageStore } from '../storage/images'
import { sniffImageType } from '../storage/images'
import { requireScope, requireSession, type Caller } from './caller'
import { decodeCursor, encodeCursor, type Cursor } from './cursor'
import { newId } from './ids'
import { LIMITS, itemEnums, listLimit, normalizeTags, requiredTags, text } from './item-input'
import { ITEM_COLUMNS, ITEM_COLUMNS_AS, toItemRecord, type ItemView, type ItemType, type ExtractionStatus } from './item-view'

/** What the items domain needs besides the caller: the database and the image store. */
export interface ItemDeps {
  db: Db
  images: ImageStore
}

export interface Page {
  items: ItemView[]
  next_cursor: string | null
}

export interface ItemListFilter {
  type?: string
  status?: string
  tag?: string
  tags?: string
  cursor?: string
  limit?: unknown
}

/** An uploaded image. Its declared type and file name are ignored: the bytes say what it is. */
export interface NewImage {
  bytes: Uint8Array
}

/** Each page's keyset positions, for per-item cursors (GraphQL edges), kept off the page itself. */
const positions = new WeakMap<Page, Cursor[]>()

/** The cursor of each item on a page, in order: the same cursors REST hands out. */
export function itemCursors(page: Page): string[] {
  return (positions.get(page) ?? []).map(encodeCursor)
}

/** A page of `limit + 1` rows → the page and the cursor of its last item when more follow. */
export function toPage(rows: { view: ItemView; createdAtMs: number }[], limit: number): Page {
  const more = rows.length > limit
  const kept = more ? rows.slice(0, limit) : rows
  const last = kept[kept.length - 1]
  const page: Page = {
    items: kept.map((r) => r.view),
    next_cursor: more && last ? encodeCursor({ createdAt: last.createdAtMs, id: last.view.id }) : null,
  }
  positions.set(page, kept.map((r) => ({ createdAt: r.createdAtMs, id: r.view.id })))
  return page
}

/**
 * Recent items, newest first. The keyset is a row-value comparison on (created_at, id), so
 * every page costs what the first costs. With tag filters the first tag's index drives the scan
 * in the same order and the other tags are checked by primary-key lookups.
 */
export async function listItems(deps: ItemDeps, caller: Caller, filter: ItemListFilter, now = Date.now()): Promise<Page> {
  requireScope(caller, 'read_items')
  const limit = listLimit(filter.limit)
  const type = filter.type === undefined ? undefined : itemEnums.type(filter.type)
  const status = filter.status === undefined ? undefined : itemEnums.status(filter.status)
  const tags = requiredTags(filter.tag, filter.tags)
  const cursor = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor)

  const args: InArgs = []
  let sql: string
  if (tags.length === 0) {
    const where = ['user_id = ?']
    args.push(caller.userId)
    if (type) where.push('type = ?'), args.push(type)
    if (status) where.push('status = ?'), args.push(status)
    if (cursor) where.push('(created_at, id) < (?, ?)'), args.push(cursor.createdAt, cursor.id)
    sql = `SELECT ${ITEM_COLUMNS} FROM items WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`
  } else {
    const where = ['t.user_id = ?', 't.tag = ?']
    args.push(caller.userId, tags[0]!)
    if (cursor) where.push('(t.created_at, t.item_id) < (?, ?)'), args.push(cursor.createdAt, cursor.id)
    for (const tag of tags.slice(1)) {
      where.push('EXISTS (SELECT 1 FROM item_tags t2 WHERE t2.item_id = t.item_id AND t2.tag = ?)')
      args.push(tag)
    }
    if (type) where.push('i.type = ?'), args.push(type)
    if (status) where.push('i.status = ?'), args.push(status)
    sql = `SELECT ${ITEM_COLUMNS_AS('i')} FROM item_tags t JOIN items i ON i.id = t.item_id
           WHERE ${where.join(' AND ')} ORDER BY t.created_at DESC, t.item_id DESC LIMIT ?`
  }
  args.push(limit + 1)
  const rows = await deps.db.$rows(sql, args)
  return toPage(rows.map((row) => toItemRecord(row, caller, now)), limit)
}

/** Reads one of the caller's items; another user's id answers exactly like an unknown one. */
export async function findItemRecord(db: Db, caller: Caller, id: string, now = Date.now()) {
  if (id.length > 100) throw notFound()
  const [row] = await db.$rows(`SELECT ${ITEM_COLUMNS} FROM items WHERE id = ? AND user_id = ?`, [id, caller.userId])
  if (!row) throw notFound()
  return toItemRecord(row, caller, now)
}

/** One item with its signed image URL (null without an image). */
export async function getItem(deps: ItemDeps, caller: Caller, id: string, baseUrl: string, now = Date.now()): Promise<ItemView & { source_image_url: string | null }> {
  requireScope(caller, 'read_items')
  const record = await findItemRecord(deps.db, caller, id, now)
  return {
    ...record.view,
    source_image_url: record.imageKey ? deps.images.signedUrl(record.imageKey, record.imageType ?? 'application/octet-stream', baseUrl, now) : null,
  }
}

/** Signed image links for several of the caller's items in one query (null without an image). */
export async function imageLinks(deps: ItemDeps, caller: Caller, ids: readonly string[], baseUrl: string, now = Date.now()) {
  requireScope(caller, 'read_items')
  const links = new Map<string, string | null>(ids.map((id) => [id, null]))
  if (ids.length === 0) return links
  const rows = await deps.db.$query(
    `SELECT id, image_key, image_type FROM items WHERE user_id = ? AND image_key IS NOT NULL AND id IN (${ids.map(() => '?').join(', ')})`,
    [caller.userId, ...ids],
  )
  for (const r of rows) {
    links.set(String(r.id), deps.images.signedUrl(String(r.image_key), String(r.image_type), baseUrl, now))
  }
  return links
}

export interface CreateItemInput {
  type?: unknown
  status?: unknown
  workflow_status?: unknown
  title?: unknown
  summary?: unknown
  action_note?: unknown
  tags?: unknown
  requested_action?: unknown
  destination_kind?: unknown
  destination_name?: unknown
}

const CREATE_FIELDS = new Set([
  'type', 'status', 'workflow_status', 'title', 'summary', 'action_note', 'tags',
  'requested_action', 'destination_kind', 'destination_name',
])

/** Saves a new item for the signed-in user (session only), with an optional image. */
export async function createItem(
  deps: ItemDeps,
  caller: Caller,
  input: CreateItemInput,
  image: NewImage | undefined,
  baseUrl: string,
  maxImageBytes: number,
  now = Date.now(),
): Promise<ItemView & { source_image_url: string | null }> {
  requireSession(caller)
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('The body must be a JSON object.')
  for (const key of Object.keys(input)) {
    if (!CREATE_FIELDS.has(key)) throw invalid(`Unknown property "${key}".`, { field: key })
  }
  const type: ItemType = itemEnums.type(input.type)
  const title = text('title', input.title, LIMITS.title)
  const summary = text('summary', input.summary, LIMITS.summary)
  const actionNote = text('action_note', input.action_note, LIMITS.note)
  const hasContent = title !== null || summary !== null || actionNote !== null
  // Content given means extraction already happened; an image alone waits for extraction.
  const status: ExtractionStatus =
    input.status === undefined || input.status === null ? (hasContent || !image ? 'extracted' : 'queued') : itemEnums.status(input.status)
  const workflowStatus =
    input.workflow_status === undefined || input.workflow_status === null ? 'pending' : itemEnums.workflowStatus(input.workflow_status)
  const tags = normalizeTags('tags', input.tags)
  const requestedAction =
    input.requested_action === undefined || input.requested_action === null ? null : itemEnums.requestedAction(input.requested_action)
  const destinationKind = text('destination_kind', input.destination_kind, LIMITS.destination)
  const destinationName = text('destination_name', input.destination_name, LIMITS.destination)

  const id = newId('itm', now)
  let imageKey: string | null = null
  let imageType: string | null = null
  if (image) {
    if (image.bytes.byteLength > maxImageBytes) {
      throw new AppError('payload_too_large', `The image must be at most ${maxImageBytes} bytes.`, { max_bytes: maxImageBytes })
    }
    imageType = sniffImageType(image.bytes)
    if (!imageType) throw new AppError('unsupported_media_type', 'The image must be PNG, JPEG, WebP or GIF.')
    imageKey = `${id}.${imageType.split('/')[1]}`
    // Written before the row: a crash between the two leaves an orphan file, never a row whose image is missing.
    await deps.images.put(imageKey, image.bytes, imageType)
  }

  const tagsJson = JSON.stringify(tags)
  await deps.db.$client.batch(
    [
      {
        sql: `INSERT INTO items (id, user_id, type, status, workflow_status, title, summary, action_note, tags,
                requested_action, destination_kind, destination_name, image_key, image_type, created_at, updated_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [id, caller.userId, type, status, workflowStatus, title, summary, actionNote, tagsJson, requestedAction,
          destinationKind, destinationName, imageKey, imageType, now, now],
      },
      {
        sql: 'INSERT INTO item_tags (item_id, user_id, tag, created_at) SELECT ?, ?, value, ? FROM json_each(?)',
        args: [id, caller.userId, now, tagsJson],
      },
    ],
    'write',
  )
  return getItem(deps, caller, id, baseUrl, now)
}
