import { invalidField } from '../errors'

/**
 * The meaning checks of every input, in domain spelling. Shapes (types, enums, unknown
 * properties) are checked at each front end's edge; ranges and lengths are checked here, once.
 * The README's limits table mirrors these.
 */
export const LIMITS = {
  title: 500,
  summary: 10_000,
  note: 10_000,
  destination: 200,
  tags: 50,
  tagLength: 64,
  listLimit: 200,
  defaultListLimit: 50,
  leaseSeconds: 86_400,
  defaultLeaseSeconds: 300,
  retryAfterSeconds: 86_400,
  waitSeconds: 60,
} as const

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/

/** A string within a length, or null. Control characters other than tab/newline are refused. */
export function text(field: string, value: string | null | undefined, max: number): string | null {
  if (value === null || value === undefined) return null
  if (value.length > max) throw invalidField(field, `must be at most ${max} characters`, { max })
  if (CONTROL.test(value)) throw invalidField(field, 'contains control characters')
  return value
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Tags are trimmed, empty and duplicate tags dropped, order kept; too many or too long is a 400. */
export function normalizeTags(
  field: string,
  value: readonly string[] | null | undefined,
): string[] {
  if (value === undefined || value === null) return []
  const seen = new Set<string>()
  for (const raw of value) {
    const tag = raw.trim()
    if (tag === '') continue
    if (tag.length > LIMITS.tagLength)
      throw invalidField(field, `must hold tags of at most ${LIMITS.tagLength} characters`)
    if (/[\u0000-\u001f,]/.test(tag))
      throw invalidField(field, 'cannot hold commas or control characters')
    // A lone surrogate is no character: SQLite's JSON functions and the driver would store and
    // match it as different bytes, so such a tag could be saved but never found.
    if (LONE_SURROGATE.test(tag)) throw invalidField(field, 'must be valid Unicode text')
    seen.add(tag)
  }
  if (seen.size > LIMITS.tags) throw invalidField(field, `must hold at most ${LIMITS.tags} tags`)
  return [...seen]
}

/** Filter tags (all must match): trimmed, de-duplicated, bounded. */
export function filterTags(value: readonly string[] | undefined): string[] {
  const unique = [...new Set((value ?? []).map((t) => t.trim()).filter(Boolean))]
  if (unique.length > LIMITS.tags)
    throw invalidField('tags', `must hold at most ${LIMITS.tags} tags`)
  for (const t of unique)
    if (t.length > LIMITS.tagLength)
      throw invalidField('tags', `must hold tags of at most ${LIMITS.tagLength} characters`)
  return unique
}

/** A whole number within a range, or the default when absent. */
export function wholeNumber(
  field: string,
  value: number | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidField(field, `must be a whole number from ${min} to ${max}`, { min, max })
  }
  return value
}

export const pageLimit = (
  value: number | undefined,
  max: number = LIMITS.listLimit,
  fallback: number = LIMITS.defaultListLimit,
) => wholeNumber('limit', value, 1, max, fallback)
