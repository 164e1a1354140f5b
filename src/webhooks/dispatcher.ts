import { randomBytes } from 'node:crypto'
import type { BatchStatement } from '../db/client'
import { Webhook as Signer } from 'standardwebhooks'
import { CHANGE_SELECT, changeSeq, changeUser, toChangeRecord } from '../domain/change-record'
import type { Deps } from '../domain/deps'
import { checkDestination, pinnedTarget } from '../domain/network-guard'
import { DEFAULT_WEBHOOK_POLICY, WEBHOOK_LIMITS, type WebhookPolicy } from '../domain/webhooks'
import { webhookPayload } from '../http/push-serialize'

const ENQUEUE_BATCH = 500
/** Finished deliveries and attempts are kept this long, then pruned. */
const RETENTION_MS = 7 * 24 * 3600 * 1000
const PRUNE_EVERY_MS = 10 * 60 * 1000

interface Claimed {
  id: number
  webhookId: string
  payload: string
  attempt: number
}

interface Outcome {
  ok: boolean
  gone: boolean
  status: number | null
  error: string | null
}

/**
 * Delivers webhooks (CONTRACT 8). Every server process runs one; they share nothing but the
 * database:
 *
 * 1. Enqueue: the dispatcher follows the change log. It reads the changes after each enabled
 *    endpoint's `enqueued_seq`, then in one write batch inserts one outbox row per matching
 *    change (payload frozen, so every retry sends the same bytes) and moves `enqueued_seq` on,
 *    every statement conditional on the position it read. The unique (endpoint, seq) key and
 *    that condition make this exactly-once whichever process gets there first. (Writing the outbox in each change's own transaction would touch
 *    every write path; following the log keeps them as they are, at the cost of up to one poll
 *    interval of latency.)
 * 2. Deliver: due rows are claimed with one conditional UPDATE … RETURNING that sets a lease,
 *    as items are claimed, so each attempt is made by exactly one process. The result is
 *    written only while that lease is still the row's (a fencing marker in the same batch).
 */
export class WebhookDispatcher {
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = true
  private inFlight = 0
  private prunedAt = 0
  private readonly policy: WebhookPolicy

  constructor(
    private readonly deps: Deps,
    private readonly pollMs = 500,
    private readonly maxInFlight = 16,
  ) {
    this.policy = deps.webhooks ?? DEFAULT_WEBHOOK_POLICY
    // The first prune a minute after start, not at start: short-lived processes stay read-only.
    this.prunedAt = deps.clock.now() - PRUNE_EVERY_MS + 60_000
  }

  start() {
    if (!this.stopped) return
    this.stopped = false
    this.schedule(0)
  }

  stop() {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(delay: number) {
    if (this.stopped) return
    this.timer = setTimeout(() => void this.tick(), delay)
    // The dispatcher never keeps a process alive by itself.
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  private async tick() {
    this.timer = undefined
    if (this.deps.db.$client.closed) return this.stop()
    try {
      await this.enqueue()
      await this.claimAndDeliver()
      await this.prune()
    } catch (error) {
      if (this.deps.db.$client.closed) return this.stop()
      this.deps.logger.warn('webhook dispatch failed', {
        error: error instanceof Error ? error.message : String(error),
      })
    }
    this.schedule(this.pollMs)
  }

  /**
   * Writes the outbox rows for changes no process has enqueued yet. Read first, then one write
   * batch in which every insert and the move of `enqueued_seq` are conditional on the position
   * read: if another process got there first, this batch changes nothing.
   */
  private async enqueue() {
    const db = this.deps.db
    const [top] = await db.$query('SELECT coalesce(max(id), 0) AS m FROM item_events')
    const max = Number(top?.m ?? 0)
    const hooks = await db.$query(
      'SELECT id, user_id, actions, enqueued_seq FROM webhooks WHERE enabled = 1 AND enqueued_seq < ? ORDER BY enqueued_seq LIMIT 100',
      [max],
    )
    if (hooks.length === 0) return
    const from = Math.min(...hooks.map((h) => Number(h.enqueued_seq)))
    const users = [...new Set(hooks.map((h) => String(h.user_id)))]
    const rows = await db.$rows(
      `${CHANGE_SELECT} WHERE e.id > ? AND e.id <= ? AND e.user_id IN (${users.map(() => '?').join(', ')}) ORDER BY e.id LIMIT ${ENQUEUE_BATCH}`,
      [from, max, ...users],
    )
    const lastRow = rows.at(-1)
    const upto = rows.length === ENQUEUE_BATCH && lastRow ? changeSeq(lastRow) : max
    const now = this.deps.clock.now()
    const statements: BatchStatement[] = []
    for (const hook of hooks) {
      const userId = String(hook.user_id)
      const actions = JSON.parse(String(hook.actions)) as string[]
      const start = Number(hook.enqueued_seq)
      if (start >= upto) continue
      const still =
        'EXISTS (SELECT 1 FROM webhooks WHERE id = :hook AND enabled = 1 AND enqueued_seq = :start)'
      for (const row of rows) {
        if (changeUser(row) !== userId || changeSeq(row) <= start) continue
        // The record as the endpoint's owner sees it, at the moment it is enqueued.
        const { record } = toChangeRecord(row, { kind: 'user', userId }, now)
        if (actions.length > 0 && !actions.includes(record.action)) continue
        statements.push({
          sql: `INSERT OR IGNORE INTO webhook_deliveries (webhook_id, user_id, seq, action, payload, status, attempts, next_attempt_at, created_at)
                SELECT :hook, :user, :seq, :action, :payload, 'pending', 0, :now, :now WHERE ${still}`,
          args: {
            hook: String(hook.id),
            user: userId,
            seq: Number(record.seq),
            action: record.action,
            payload: webhookPayload(record),
            now,
            start,
          },
        })
      }
      statements.push({
        sql: 'UPDATE webhooks SET enqueued_seq = :upto WHERE id = :hook AND enabled = 1 AND enqueued_seq = :start',
        args: { upto, hook: String(hook.id), start },
      })
    }
    if (statements.length > 0) await db.$batch(statements)
  }

  /** Drops finished deliveries and attempts older than a week (any process may; all are idempotent). */
  private async prune() {
    const now = this.deps.clock.now()
    if (now - this.prunedAt < PRUNE_EVERY_MS) return
    this.prunedAt = now
    const cutoff = now - RETENTION_MS
    await this.deps.db.$batch([
      {
        sql: "DELETE FROM webhook_deliveries WHERE status IN ('succeeded', 'failed') AND created_at < ?",
        args: [cutoff],
      },
      { sql: 'DELETE FROM webhook_attempts WHERE at < ?', args: [cutoff] },
    ])
  }

  /** Claims due deliveries (each by exactly one process) and attempts them without waiting. */
  private async claimAndDeliver() {
    const room = this.maxInFlight - this.inFlight
    if (room <= 0) return
    const now = this.deps.clock.now()
    const lease = randomBytes(12).toString('base64url')
    // Longer than an attempt can take (DNS, connect, the timeout), so a live lease is never doubled.
    const until = now + this.policy.timeoutMs * 2 + 10_000
    const claimed = (
      await this.deps.db.$client.execute({
        sql: `UPDATE webhook_deliveries SET lease_id = :lease, lease_expires_at = :until, attempts = attempts + 1
            WHERE id IN (
              SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.enabled = 1
              WHERE d.status = 'pending' AND d.next_attempt_at <= :now AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= :now)
              ORDER BY d.next_attempt_at, d.id LIMIT :room)
              AND status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= :now)
            RETURNING id, webhook_id, payload, attempts`,
        args: { lease, until, now, room },
      })
    ).rows
    if (claimed.length === 0) return
    const ids = [...new Set(claimed.map((r) => String(r.webhook_id)))]
    const hooks = new Map(
      (
        await this.deps.db.$client.execute({
          sql: `SELECT id, url, secret FROM webhooks WHERE id IN (${ids.map(() => '?').join(', ')})`,
          args: ids,
        })
      ).rows.map((r) => [String(r.id), { url: String(r.url), secret: String(r.secret) }]),
    )
    for (const r of claimed) {
      const delivery: Claimed = {
        id: Number(r.id),
        webhookId: String(r.webhook_id),
        payload: String(r.payload),
        attempt: Number(r.attempts),
      }
      const hook = hooks.get(delivery.webhookId)
      if (!hook) continue // deleted meanwhile: its outbox rows are gone too
      this.inFlight++
      void this.attempt(delivery, hook, lease)
        .catch((error) =>
          this.deps.logger.warn('webhook attempt failed', {
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .finally(() => this.inFlight--)
    }
  }

  private async attempt(delivery: Claimed, hook: { url: string; secret: string }, lease: string) {
    let outcome: Outcome
    try {
      const url = new URL(hook.url)
      // Again at delivery, after DNS: a name may have moved to a private address since registration.
      const guard = await checkDestination(url, this.policy.allowPrivateNetworks)
      if (!guard.ok)
        outcome = { ok: false, gone: false, status: null, error: `refused: ${guard.reason}` }
      else {
        const messageId = `msg_${delivery.id}`
        // The signature's timestamp is the receiver's replay guard: real time, not the domain clock.
        const timestamp = new Date()
        const signature = new Signer(hook.secret).sign(messageId, timestamp, delivery.payload)
        // Connect to the address just checked, not to whatever the name resolves to next.
        const checked = guard.addresses[0]
        const pinned =
          this.policy.allowPrivateNetworks || !checked ? null : pinnedTarget(url, checked)
        const res = await fetch(pinned?.target ?? url, {
          method: 'POST',
          ...(pinned?.serverName ? { tls: { serverName: pinned.serverName } } : {}),
          headers: {
            ...(pinned ? { host: pinned.host } : {}),
            'content-type': 'application/json',
            'user-agent': 'saved-items-webhooks/1',
            'webhook-id': messageId,
            'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
            'webhook-signature': signature,
          },
          body: delivery.payload,
          redirect: 'manual',
          signal: AbortSignal.timeout(this.policy.timeoutMs),
        })
        await res.body?.cancel().catch(() => {})
        outcome = {
          ok: res.status >= 200 && res.status < 300,
          gone: res.status === 410,
          status: res.status,
          error: null,
        }
      }
    } catch (error) {
      const name = (error as { name?: string } | undefined)?.name
      outcome = {
        ok: false,
        gone: false,
        status: null,
        error: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network error',
      }
    }
    await this.record(delivery, lease, outcome)
  }

  /** Writes the attempt's result, only while the lease is still ours, in one transaction. */
  private async record(delivery: Claimed, lease: string, outcome: Outcome) {
    const now = this.deps.clock.now()
    const schedule = this.policy.retrySchedule
    let status: 'succeeded' | 'retrying' | 'failed'
    let next: number | null = null
    const delay = schedule[delivery.attempt - 1]
    if (outcome.ok) status = 'succeeded'
    else if (outcome.gone || delay === undefined) status = 'failed'
    else (status = 'retrying'), (next = now + Math.round(delay * 1000))
    const done = `done:${lease}`
    const mine = 'EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = :id AND lease_id = :done)'
    const p = {
      id: delivery.id,
      lease,
      done,
      now,
      next,
      webhook: delivery.webhookId,
      attempt: delivery.attempt,
      status,
      outboxStatus: status === 'retrying' ? 'pending' : status,
      response: outcome.status,
      error: outcome.error,
      maxFailures: WEBHOOK_LIMITS.failuresInARow,
    }
    const webhookUpdate = outcome.ok
      ? `UPDATE webhooks SET failures = 0 WHERE id = :webhook AND ${mine}`
      : outcome.gone
        ? `UPDATE webhooks SET enabled = 0, disabled_reason = coalesce(disabled_reason, 'gone') WHERE id = :webhook AND ${mine}`
        : `UPDATE webhooks SET failures = failures + 1,
             disabled_reason = CASE WHEN failures + 1 >= :maxFailures THEN coalesce(disabled_reason, 'failures') ELSE disabled_reason END,
             enabled = CASE WHEN failures + 1 >= :maxFailures THEN 0 ELSE enabled END
           WHERE id = :webhook AND ${mine}`
    await this.deps.db.$batch([
      {
        sql: `UPDATE webhook_deliveries SET next_attempt_at = coalesce(:next, next_attempt_at),
                  status = CASE WHEN :outboxStatus = 'pending' AND NOT EXISTS (SELECT 1 FROM webhooks WHERE id = :webhook AND enabled = 1)
                    THEN 'failed' ELSE :outboxStatus END,
                  lease_id = :done, lease_expires_at = NULL
                WHERE id = :id AND lease_id = :lease`,
        args: p,
      },
      {
        sql: `INSERT INTO webhook_attempts (delivery_id, webhook_id, seq, action, attempt, status, response_status, error, at, next_attempt_at)
                SELECT id, webhook_id, seq, action, :attempt, :status, :response, :error, :now, :next FROM webhook_deliveries
                WHERE id = :id AND lease_id = :done`,
        args: p,
      },
      { sql: webhookUpdate, args: p },
      // A disabled endpoint's waiting deliveries are given up, so the pruning can drop them.
      {
        sql: `UPDATE webhook_deliveries SET status = 'failed'
                WHERE webhook_id = :webhook AND status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= :now)
                  AND EXISTS (SELECT 1 FROM webhooks WHERE id = :webhook AND enabled = 0) AND ${mine}`,
        args: p,
      },
    ])
  }
}
