import type { AgentToken } from '../domain/agent-tokens'
import type { Lease } from '../domain/inbox'
import type { Item, ItemWithImage } from '../domain/item'
import type { JsonPage } from '../domain/item-pages'
import type { Page } from '../domain/page'
import type { HistoryEvent } from '../domain/workflow'

// REST's spelling of domain values: snake_case names and ISO 8601 timestamps. This file and
// the request translators in items.ts are the only places REST renames a field.

/** camelCase (domain) → snake_case (REST): `leaseSeconds` → `lease_seconds`. */
export const restSpelling = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

const iso = (ms: number) => new Date(ms).toISOString()
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))

export function itemJson(i: Item) {
  return {
    id: i.id,
    type: i.type,
    status: i.status,
    workflow_status: i.workflowStatus,
    title: i.title,
    summary: i.summary,
    action_note: i.actionNote,
    resolution_note: i.resolutionNote,
    tags: i.tags,
    requested_action: i.requestedAction,
    destination_kind: i.destinationKind,
    destination_name: i.destinationName,
    attempts: i.attempts,
    available_at: isoOrNull(i.availableAt),
    created_at: iso(i.createdAt),
    updated_at: iso(i.updatedAt),
    // The caller's view last: the same order as a page the database renders (item-pages.ts).
    claim_status: i.claimStatus,
    claimed_by: i.claimedBy,
    lease_expires_at: isoOrNull(i.leaseExpiresAt),
    lease_id: i.leaseId,
  }
}

/** A page the database rendered in REST's spelling, as the JSON text of `{ items, next_cursor }`. */
export const jsonPageText = (page: JsonPage): string =>
  `{"items":${page.items},"next_cursor":${page.nextCursor === null ? 'null' : JSON.stringify(page.nextCursor)}}`
export type ItemJson = ReturnType<typeof itemJson> & { source_image_url?: string | null }

export const itemWithImageJson = (i: ItemWithImage): ItemJson => ({
  ...itemJson(i),
  source_image_url: i.sourceImageUrl,
})

export const pageJson = (page: Page<Item>) => ({
  items: page.items.map(itemJson),
  next_cursor: page.nextCursor,
})
export type PageJson = ReturnType<typeof pageJson>

export const leaseJson = (lease: Lease) => ({
  id: lease.id,
  expires_at: iso(lease.expiresAt),
  attempt: lease.attempt,
})

export const historyJson = (events: HistoryEvent[]) => ({
  events: events.map((e) => ({
    at: iso(e.at),
    actor: e.actor,
    action: e.action,
    from: e.from,
    to: e.to,
    note: e.note,
  })),
})

export const agentTokenJson = (t: AgentToken) => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  created_at: iso(t.createdAt),
  expires_at: iso(t.expiresAt),
  last_used_at: isoOrNull(t.lastUsedAt),
  token_hint: t.tokenHint,
})
