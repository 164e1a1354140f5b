import { AppError } from '../errors'
import type { Deps } from './deps'

/** How long a key is remembered (CONTRACT 7). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000
/** A first request that has not finished by then is presumed dead (its process crashed). */
const ABANDONED_AFTER_MS = 5 * 60 * 1000

export const isIdempotencyKey = (key: string) => /^[\x20-\x7e]{1,255}$/.test(key)

export interface StoredAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

export type Reservation = { kind: 'run' } | { kind: 'replay'; answer: StoredAnswer }

/**
 * Reserves `key` for `owner` (one caller: an agent token or a user) and a request fingerprint.
 * One conditional INSERT decides who runs: of two identical requests at once, one runs and the
 * other is told the first is in flight — never both applied.
 */
export async function reserveIdempotencyKey(
  deps: Deps,
  owner: string,
  key: string,
  fingerprint: string,
): Promise<Reservation> {
  const now = deps.clock.now()
  const p = {
    owner,
    key,
    fp: fingerprint,
    now,
    expired: now - IDEMPOTENCY_TTL_MS,
    abandoned: now - ABANDONED_AFTER_MS,
  }
  const [, inserted] = await deps.db.$batch([
    {
      sql: `DELETE FROM idempotency_keys WHERE owner = :owner AND key = :key
                AND (created_at <= :expired OR (status IS NULL AND created_at <= :abandoned))`,
      args: p,
    },
    {
      sql: `INSERT INTO idempotency_keys (owner, key, fingerprint, created_at) VALUES (:owner, :key, :fp, :now)
              ON CONFLICT DO NOTHING RETURNING owner`,
      args: p,
    },
  ])
  if (inserted?.rows.length) {
    // Now and then, forget every expired key (the index on created_at makes this cheap).
    if (Math.random() < 0.01)
      await deps.db.$client.execute({
        sql: 'DELETE FROM idempotency_keys WHERE created_at <= ?',
        args: [p.expired],
      })
    return { kind: 'run' }
  }
  const [row] = await deps.db.$query(
    'SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE owner = ? AND key = ?',
    [owner, key],
  )
  if (!row) return reserveIdempotencyKey(deps, owner, key, fingerprint)
  if (row.fingerprint !== fingerprint) {
    throw new AppError(
      'idempotency_key_reused',
      'This Idempotency-Key was used with a different request; use a new key.',
    )
  }
  if (row.status === null)
    throw new AppError(
      'idempotency_key_in_flight',
      'A request with this Idempotency-Key is still running; retry shortly.',
    )
  return {
    kind: 'replay',
    answer: {
      status: Number(row.status),
      headers: JSON.parse(String(row.headers)),
      body: String(row.body),
    },
  }
}

/** Stores the first answer for replay. */
export async function completeIdempotencyKey(
  deps: Deps,
  owner: string,
  key: string,
  answer: StoredAnswer,
): Promise<void> {
  await deps.db.$client.execute({
    sql: 'UPDATE idempotency_keys SET status = ?, headers = ?, body = ? WHERE owner = ? AND key = ?',
    args: [answer.status, JSON.stringify(answer.headers), answer.body, owner, key],
  })
}

/** Forgets a reservation whose request failed on our side, so a retry can run. */
export async function releaseIdempotencyKey(deps: Deps, owner: string, key: string): Promise<void> {
  await deps.db.$client.execute({
    sql: 'DELETE FROM idempotency_keys WHERE owner = ? AND key = ? AND status IS NULL',
    args: [owner, key],
  })
}
