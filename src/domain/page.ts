import { invalidField } from '../errors'

/** A position in a (created_at, id) keyset order. */
export interface Cursor {
  createdAt: number
  id: string
}

/** Opaque to clients: base64url (unpadded) of `<created_at ms>:<id>`, both ASCII. */
export function encodeCursor(c: Cursor): string {
  return cursorOfKey(`${c.createdAt}:${c.id}`)
}

/** The cursor of a key already written as `<created_at ms>:<id>` (as SQL joins them for a page). */
export const cursorOfKey = (key: string): string => Buffer.from(key, 'latin1').toString('base64url')

/** A cursor that does not decode to exactly that shape is a 400, never a scan from the start. */
export function decodeCursor(raw: string): Cursor {
  const bad = () => invalidField('cursor', 'is not a cursor this service handed out')
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(raw)) throw bad()
  const decoded = Buffer.from(raw, 'base64url').toString('utf8')
  const match = /^(\d{1,15}):([A-Za-z0-9_-]{1,64})$/.exec(decoded)
  const [, at, id] = match ?? []
  if (!at || !id || encodeCursor({ createdAt: Number(at), id }) !== raw) throw bad()
  return { createdAt: Number(at), id }
}

/** One page of a keyset walk. `cursorAt(i)` resumes right after item i (GraphQL edge cursors). */
export interface Page<T> {
  items: T[]
  /** Resumes after the last item; null on the last page. */
  nextCursor: string | null
  cursorAt(index: number): string
}

/** `limit + 1` items read → the page, and a next cursor when more follow. */
export function toPage<T extends { id: string; createdAt: number }>(
  read: T[],
  limit: number,
): Page<T> {
  const more = read.length > limit
  const items = more ? read.slice(0, limit) : read
  const cursorAt = (i: number) => {
    const item = items[i]
    if (!item) throw new RangeError(`no item ${i} on this page`)
    return encodeCursor({ createdAt: item.createdAt, id: item.id })
  }
  return {
    items,
    nextCursor: more && items.length > 0 ? cursorAt(items.length - 1) : null,
    cursorAt,
  }
}
