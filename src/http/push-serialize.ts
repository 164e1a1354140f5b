import type { ChangeRecord } from '../domain/change-record'
import type { Webhook, WebhookAttempt } from '../domain/webhooks'
import { itemJson } from './serialize'

// REST's spelling of change records and webhooks (snake_case, ISO 8601). Webhook payloads use
// the same spelling: a receiver reads the same record as GET /api/saved/changes answers.

const iso = (ms: number) => new Date(ms).toISOString()

export const changeJson = (c: ChangeRecord) => ({
  seq: c.seq,
  at: iso(c.at),
  item_id: c.itemId,
  action: c.action,
  actor: c.actor,
  item: c.item ? itemJson(c.item) : null,
})

export const webhookJson = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  actions: w.actions,
  description: w.description,
  created_at: iso(w.createdAt),
  enabled: w.enabled,
  disabled_reason: w.disabledReason,
})

export const deliveryJson = (a: WebhookAttempt) => ({
  id: a.id,
  seq: a.seq,
  action: a.action,
  attempt: a.attempt,
  status: a.status,
  response_status: a.responseStatus,
  at: iso(a.at),
  next_attempt_at: a.nextAttemptAt === null ? null : iso(a.nextAttemptAt),
})

/** The body of a webhook delivery (Standard Webhooks' `type`, `timestamp`, `data`). */
export const webhookPayload = (c: ChangeRecord) =>
  JSON.stringify({ type: `item.${c.action}`, timestamp: iso(c.at), data: changeJson(c) })
