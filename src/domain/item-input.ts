import { invalid } from '../errors'
import { ITEM_TYPES, REQUESTED_ACTIONS, EXTRACTION_STATUSES, WORKFLOW_STATUSES } from './item-view'

/** Limits of CONTRACT 2 and the robustness issue; the README's limits table mirrors these. */
export const LIMITS = {
  title: 500,
  summary: 10_000,
  note: 10_000,
  destination: 200,
  tags: 50,
  tagLength: 64,
  listLimit: 200,
  defaultListLimit: 50,
} as const

export function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw invalid(`${field} must be one of: ${allowed.join(', ')}.`, { field })
  }
  return value as T
}

/** A string within a length, or null. Control characters other than tab/newline are refused. */
export function text(field: string, value: unknown, max: number): string | null {
  if (value === null || value === undefined) return null
  if (typeof value !== 'string') throw invalid(`${field} must be a string.`, { field })
  if (value.length > max) throw invalid(`${field} must be at most ${max} characters.`, { field, max })
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(value)) throw invalid(`${field} contains control characters.`, { field })
  return value
}

/** Tags are trimmed, empty and duplicate tags dropped, order kept; too many or too long is a 400. */
export function normalizeTags(field: string, value: unknown): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw invalid(`${field} must be an array of strings.`, { field })
  const seen = new Set<string>()
  for (const raw of value) {
    if (typeof raw !== 'string') throw invalid(`${field} must be an array of strings.`, { field })
    const tag = raw.trim()
    if (tag === '') continue
    if (tag.length > LIMITS.tagLength) throw invalid(`Each tag must be at most ${LIMITS.tagLength} characters.`, { field })
    if (/[\u0000-\u001f,]/.test(tag)) throw invalid('Tags cannot contain commas or control characters.', { field })
    seen.add(tag)
  }
  if (seen.size > LIMITS.tags) throw invalid(`At most ${LIMITS.tags} tags are allowed.`, { field })
  return [...seen]
}

/** The `tag` and `tags` filters combined (AND): one set of required tags. */
export function requiredTags(tag: string | undefined, tags: string | undefined): string[] {
  const all = [...(tag !== undefined ? [tag] : []), ...(tags !== undefined ? tags.split(',') : [])]
    .map((t) => t.trim())
    .filter(Boolean)
  const unique = [...new Set(all)]
  if (unique.length > LIMITS.tags) throw invalid(`At most ${LIMITS.tags} tags can be filtered on.`, { field: 'tags' })
  for (const t of unique) if (t.length > LIMITS.tagLength) throw invalid('A filter tag is too long.', { field: 'tags' })
  return unique
}

export function listLimit(value: unknown): number {
  if (value === undefined) return LIMITS.defaultListLimit
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN
  if (!Number.isInteger(n) || n < 1 || n > LIMITS.listLimit) {
    throw invalid(`limit must be a whole number from 1 to ${LIMITS.listLimit}.`, { field: 'limit' })
  }
  return n
}

export const itemEnums = {
  type: (v: unknown) => oneOf('type', v, ITEM_TYPES),
  status: (v: unknown) => oneOf('status', v, EXTRACTION_STATUSES),
  workflowStatus: (v: unknown) => oneOf('workflow_status', v, WORKFLOW_STATUSES),
  requestedAction: (v: unknown) => oneOf('requested_action', v, REQUESTED_ACTIONS),
}
