import { AppError } from '../errors'
import type { Db } from '../db/client'
import type { Caller } from '../domain/caller'

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the bucket is full again (RateLimit-Reset) or, when refused, until one request fits. */
  resetSeconds: number
}

/**
 * Where buckets live. In-process by default; the interface is async so a shared store (Redis,
 * a libSQL table) can serve several processes without changing any caller.
 */
export interface RateLimitStore {
  take(key: string, now: number): Promise<RateDecision> | RateDecision
}

/** A token bucket per key: `perMinute` capacity, refilled continuously. */
export class MemoryTokenBuckets implements RateLimitStore {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  private readonly refillPerMs: number

  constructor(private readonly perMinute: number) {
    this.refillPerMs = perMinute / 60_000
  }

  take(key: string, now: number): RateDecision {
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.refillPerMs)
    bucket.at = now
    const allowed = bucket.tokens >= 1
    if (allowed) bucket.tokens -= 1
    this.buckets.set(key, bucket)
    if (this.buckets.size > 100_000) this.prune(now)
    const missing = allowed ? this.perMinute - bucket.tokens : 1 - bucket.tokens
    return {
      allowed,
      limit: this.perMinute,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.max(1, Math.ceil(missing / this.refillPerMs / 1000)),
    }
  }

  /** Full buckets carry no information; dropping them bounds memory. */
  private prune(now: number) {
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.refillPerMs >= this.perMinute) this.buckets.delete(key)
    }
  }
}

/**
 * Buckets in the database, so every server process sharing it (WORKERS=n, or several hosts on
 * one Turso database) draws from the same bucket. The refill and the draw are one conditional
 * UPSERT, so concurrent requests cannot overdraw. Costs one write per request.
 */
export class DatabaseTokenBuckets implements RateLimitStore {
  private readonly refillPerMs: number

  constructor(
    private readonly db: Db,
    private readonly perMinute: number,
  ) {
    this.refillPerMs = perMinute / 60_000
  }

  async take(key: string, now: number): Promise<RateDecision> {
    const args = { key, now, cap: this.perMinute, rate: this.refillPerMs }
    const drawn = await this.db.$client.execute({
      sql: `INSERT INTO rate_buckets (key, tokens, at) VALUES (:key, :cap - 1, :now)
            ON CONFLICT(key) DO UPDATE SET tokens = min(:cap, tokens + (:now - at) * :rate) - 1, at = :now
            WHERE min(:cap, rate_buckets.tokens + (:now - rate_buckets.at) * :rate) >= 1
            RETURNING tokens`,
      args,
    })
    const left = drawn.rows[0]?.tokens
    if (left !== undefined) {
      const tokens = Number(left)
      return { allowed: true, limit: this.perMinute, remaining: Math.floor(tokens), resetSeconds: Math.max(1, Math.ceil((this.perMinute - tokens) / this.refillPerMs / 1000)) }
    }
    const current = await this.db.$client.execute({
      sql: 'SELECT min(:cap, tokens + (:now - at) * :rate) AS tokens FROM rate_buckets WHERE key = :key',
      args,
    })
    const tokens = Number(current.rows[0]?.tokens ?? 0)
    return { allowed: false, limit: this.perMinute, remaining: 0, resetSeconds: Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / 1000)) }
  }
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return { 'RateLimit-Limit': String(d.limit), 'RateLimit-Remaining': String(d.remaining), 'RateLimit-Reset': String(d.resetSeconds) }
}

export type CallerRateLimiter = (caller: Caller) => Promise<RateDecision | null>

/** Per caller: each agent token has its own bucket, and so does each user's session. `0` disables. */
export function createRateLimiter(perMinute: number, store: RateLimitStore = new MemoryTokenBuckets(perMinute)): CallerRateLimiter {
  if (perMinute === 0) return async () => null
  return async (caller) => {
    const key = caller.kind === 'agent_token' ? `token:${caller.tokenId}` : `user:${caller.userId}`
    const decision = await store.take(key, Date.now())
    if (!decision.allowed) {
      throw new AppError('rate_limited', `Too many requests; try again in ${decision.resetSeconds} s.`, { retry_after_seconds: decision.resetSeconds }, {
        'Retry-After': String(decision.resetSeconds),
        ...rateHeaders(decision),
      })
    }
    return decision
  }
}
