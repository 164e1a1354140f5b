import { randomBytes } from 'node:crypto'

let lastMs = 0
let seq = 0

/**
 * Opaque, unique, URL-safe ids: a kind prefix, the creation time and a per-millisecond sequence
 * (so ids made in one millisecond still sort in creation order, which keeps the (created_at, id)
 * keyset order equal to creation order), then 12 random bytes.
 */
export function newId(kind: 'itm' | 'tok', now = Date.now()): string {
  if (now === lastMs) seq++
  else (lastMs = now), (seq = 0)
  const time = now.toString(36).padStart(9, '0')
  const counter = seq.toString(36).padStart(4, '0')
  return `${kind}_${time}${counter}${randomBytes(12).toString('base64url')}`
}

/** Milliseconds since the epoch → ISO 8601 UTC with millisecond precision. */
export function iso(ms: number): string {
  return new Date(ms).toISOString()
}
