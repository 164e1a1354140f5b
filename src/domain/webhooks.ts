import { randomBytes } from 'node:crypto'
import { AppError, invalidField, notFound } from '../errors'
import { requireSession, type Caller } from './caller'
import { CHANGE_ACTIONS, type ChangeAction } from './change-record'
import type { Deps } from './deps'
import { checkDestination } from './network-guard'
import { text } from './rules'

/** How webhooks behave (from WEBHOOK_* configuration); absent: the defaults, private networks refused. */
export interface WebhookPolicy {
  allowPrivateNetworks: boolean
  /** Seconds before each retry; after the last, a delivery is given up. */
  retrySchedule: number[]
  timeoutMs: number
}

export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = {
  allowPrivateNetworks: false,
  retrySchedule: [5, 300, 1800, 7200, 18000, 36000],
  timeoutMs: 10_000,
}

export const WEBHOOK_LIMITS = {
  perUser: 10,
  urlLength: 2048,
  description: 500,
  /** Failed attempts in a row that disable an endpoint. */
  failuresInARow: 50,
  deliveriesListed: 100,
} as const

export interface Webhook {
  id: string
  url: string
  /** Empty: every action. */
  actions: ChangeAction[]
  description: string | null
  createdAt: number
  enabled: boolean
  /** `gone` (the receiver answered 410) or `failures` (50 failed attempts in a row). */
  disabledReason: string | null
}

export interface NewWebhook {
  url: string
  actions?: readonly string[] | null
  description?: string | null
}

export interface WebhookAttempt {
  id: string
  seq: string
  action: ChangeAction
  attempt: number
  status: 'succeeded' | 'retrying' | 'failed'
  responseStatus: number | null
  at: number
  nextAttemptAt: number | null
}

const policyOf = (deps: Deps) => deps.webhooks ?? DEFAULT_WEBHOOK_POLICY

const COLUMNS = 'id, url, actions, description, created_at, enabled, disabled_reason'
const toWebhook = (r: Record<string, unknown>): Webhook => ({
  id: String(r.id),
  url: String(r.url),
  actions: JSON.parse(String(r.actions)),
  description: r.description === null ? null : String(r.description),
  createdAt: Number(r.created_at),
  enabled: Number(r.enabled) === 1,
  disabledReason: r.disabled_reason === null ? null : String(r.disabled_reason),
})

/** A URL a webhook may be registered with: http(s), no credentials, and (unless allowed) a public address. */
async function checkUrl(deps: Deps, raw: string): Promise<string> {
  if (raw.length > WEBHOOK_LIMITS.urlLength)
    throw invalidField('url', `must be at most ${WEBHOOK_LIMITS.urlLength} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalidField('url', 'must be an absolute http or https URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidField('url', 'must use http or https')
  if (url.username || url.password) throw invalidField('url', 'cannot hold credentials')
  const guard = await checkDestination(url, policyOf(deps).allowPrivateNetworks)
  if (!guard.ok) throw invalidField('url', guard.reason)
  return url.toString()
}

/**
 * Registers an endpoint for the signed-in user (session only). It receives the changes made
 * after this moment; the signing secret is returned here once.
 */
export async function createWebhook(
  deps: Deps,
  caller: Caller,
  input: NewWebhook,
): Promise<Webhook & { secret: string }> {
  requireSession(caller)
  const url = await checkUrl(deps, input.url)
  const actions = [...new Set(input.actions ?? [])]
  const unknown = actions.find((a) => !(CHANGE_ACTIONS as readonly string[]).includes(a))
  if (unknown !== undefined)
    throw invalidField('actions', `must hold only ${CHANGE_ACTIONS.join(', ')}`)
  const description = text('description', input.description, WEBHOOK_LIMITS.description)
  const id = `whk_${randomBytes(16).toString('base64url')}`
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const now = deps.clock.now()
  // The limit and the starting position are read in the insert itself: two racing creations
  // cannot both pass the count, and no change slips between "now" and the endpoint's start.
  const result = await deps.db.$client.execute({
    sql: `INSERT INTO webhooks (id, user_id, url, actions, description, secret, created_at, enabled, failures, enqueued_seq)
          SELECT ?, ?, ?, ?, ?, ?, ?, 1, 0, (SELECT coalesce(max(id), 0) FROM item_events)
          WHERE (SELECT count(*) FROM webhooks WHERE user_id = ?) < ?`,
    args: [
      id,
      caller.userId,
      url,
      JSON.stringify(actions),
      description,
      secret,
      now,
      caller.userId,
      WEBHOOK_LIMITS.perUser,
    ],
  })
  if (result.rowsAffected === 0) {
    throw new AppError(
      'webhook_limit_reached',
      `At most ${WEBHOOK_LIMITS.perUser} webhooks per user; delete one first.`,
      { max: WEBHOOK_LIMITS.perUser },
    )
  }
  return {
    id,
    url,
    actions: actions as ChangeAction[],
    description,
    createdAt: now,
    enabled: true,
    disabledReason: null,
    secret,
  }
}

/** The signed-in user's endpoints, oldest first (secrets are never listed). */
export async function listWebhooks(deps: Deps, caller: Caller): Promise<Webhook[]> {
  requireSession(caller)
  const rows = await deps.db.$query(
    `SELECT ${COLUMNS} FROM webhooks WHERE user_id = ? ORDER BY created_at, id`,
    [caller.userId],
  )
  return rows.map(toWebhook)
}

/** Deletes an endpoint with its outbox and attempts; nothing more is delivered to it. */
export async function deleteWebhook(deps: Deps, caller: Caller, id: string): Promise<void> {
  requireSession(caller)
  const results = await deps.db.$batch([
    { sql: 'DELETE FROM webhooks WHERE id = ? AND user_id = ?', args: [id, caller.userId] },
    {
      sql: 'DELETE FROM webhook_deliveries WHERE webhook_id = ? AND user_id = ?',
      args: [id, caller.userId],
    },
    {
      sql: 'DELETE FROM webhook_attempts WHERE webhook_id = ? AND NOT EXISTS (SELECT 1 FROM webhooks WHERE id = ?)',
      args: [id, id],
    },
  ])
  if (!results[0]?.rowsAffected) throw notFound('Webhook')
}

/** An endpoint's most recent delivery attempts, newest first. */
export async function listWebhookDeliveries(
  deps: Deps,
  caller: Caller,
  id: string,
): Promise<WebhookAttempt[]> {
  requireSession(caller)
  const [hook] = await deps.db.$query('SELECT id FROM webhooks WHERE id = ? AND user_id = ?', [
    id,
    caller.userId,
  ])
  if (!hook) throw notFound('Webhook')
  const rows = await deps.db.$query(
    `SELECT id, seq, action, attempt, status, response_status, at, next_attempt_at FROM webhook_attempts
     WHERE webhook_id = ? ORDER BY id DESC LIMIT ?`,
    [id, WEBHOOK_LIMITS.deliveriesListed],
  )
  return rows.map((r) => ({
    id: String(r.id),
    seq: String(r.seq),
    action: r.action as ChangeAction,
    attempt: Number(r.attempt),
    status: r.status as WebhookAttempt['status'],
    responseStatus: r.response_status === null ? null : Number(r.response_status),
    at: Number(r.at),
    nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
  }))
}
