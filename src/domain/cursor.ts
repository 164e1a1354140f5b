import { invalid } from '../errors'

/** A position in a (created_at, id) keyset order. */
export interface Cursor {
  createdAt: number
  id: string
}

/** Opaque to clients: base64url (unpadded) of `<created_at ms>:<id>`, both ASCII. */
export function encodeCursor(c: Cursor): string {
  return btoa(`${c.createdAt}:${c.id}`).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')
}

/** A cursor that does not decode to exactly that shape is a 400, never a scan from the start. */
export function decodeCursor(raw: string): Cursor {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(raw)) throw invalid('cursor is not valid.', { field: 'cursor' })
  const text = Buffer.from(raw, 'base64url').toString('utf8')
  const match = /^(\d{1,15}):([A-Za-z0-9_-]{1,64})$/.exec(text)
  if (!match || encodeCursor({ createdAt: Number(match[1]), id: match[2]! }) !== raw) {
    throw invalid('cursor is not valid.', { field: 'cursor' })
  }
  return { createdAt: Number(match[1]), id: match[2]! }
}
