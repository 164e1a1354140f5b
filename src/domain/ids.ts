import { randomBytes } from 'node:crypto'

/** Opaque, unique, URL-safe ids: a short kind prefix and 16 random bytes in base64url. */
export function newId(kind: 'itm' | 'tok'): string {
  return `${kind}_${randomBytes(16).toString('base64url')}`
}

/** Milliseconds since the epoch → ISO 8601 UTC with millisecond precision. */
export function iso(ms: number): string {
  return new Date(ms).toISOString()
}
