import { AppError } from '../errors'
import type { Db } from '../db/client'
import type { Caller } from '../domain/caller'
import type { CallerResolver } from './caller'

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
  /** Draws `count` tokens at once, or none when fewer are left (all-or-nothing). */
  take(key: string, now: number, count?: number): Promise<RateDecision> | RateDecision
  /** What is left, without drawing. */
  peek(key: string, now: number): Promise<RateDecision> | RateDecision
}

/** A token bucket per key: `perMinute` capacity, refilled continuously. */
export class MemoryTokenBuckets implements RateLimitStore {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  private readonly refillPerMs: number

  constructor(private readonly perMinute: number) {
    this.refillPerMs = perMinute / 60_000
  }

  take(key: string, now: number, count = 1): RateDecision {
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.refillPerMs)
    bucket.at = now
    const allowed = bucket.tokens >= count
    if (allowed) bucket.tokens -= count
    this.buckets.set(key, bucket)
    if (this.buckets.size > 100_000) this.prune(now)
    return this.decision(bucket.tokens, allowed, count)
  }

  peek(key: string, now: number): RateDecision {
    const bucket = this.buckets.get(key)
    const tokens = bucket
      ? Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.refillPerMs)
      : this.perMinute
    return this.decision(tokens, tokens >= 1, 1)
  }

  private decision(tokens: number, allowed: boolean, count: number): RateDecision {
    const missing = allowed ? this.perMinute - tokens : count - tokens
    return {
      allowed,
      limit: this.perMinute,
      remaining: Math.max(0, Math.floor(tokens)),
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

  async take(key: string, now: number, count = 1): Promise<RateDecision> {
    if (count > this.perMinute) return this.peek(key, now, count)
    const args = { key, now, cap: this.perMinute, rate: this.refillPerMs, count }
    const drawn = await this.db.$client.execute({
      sql: `INSERT INTO rate_buckets (key, tokens, at) VALUES (:key, :cap - :count, :now)
            ON CONFLICT(key) DO UPDATE SET tokens = min(:cap, tokens + (:now - at) * :rate) - :count, at = :now
            WHERE min(:cap, rate_buckets.tokens + (:now - rate_buckets.at) * :rate) >= :count
            RETURNING tokens`,
      args,
    })
    const left = drawn.rows[0]?.tokens
    if (left !== undefined) {
      const tokens = Number(left)
      return {
        allowed: true,
        limit: this.perMinute,
        remaining: Math.floor(tokens),
        resetSeconds: Math.max(1, Math.ceil((this.perMinute - tokens) / this.refillPerMs / 1000)),
      }
    }
    return { ...(await this.peek(key, now, count)), allowed: false }
  }

  /** What is left; `allowed` says whether `count` tokens would fit. */
  async peek(key: string, now: number, count = 1): Promise<RateDecision> {
    const current = await this.db.$client.execute({
      sql: 'SELECT min(:cap, tokens + (:now - at) * :rate) AS tokens FROM rate_buckets WHERE key = :key',
      args: { key, now, cap: this.perMinute, rate: this.refillPerMs },
    })
    const tokens =
      current.rows.length === 0 ? this.perMinute : Number(current.rows[0]?.tokens ?? this.perMinute)
    const allowed = tokens >= count
    const missing = allowed ? this.perMinute - tokens : count - tokens
    return {
      allowed,
      limit: this.perMinute,
      remaining: Math.max(0, Math.floor(tokens)),
      resetSeconds: Math.max(1, Math.ceil(missing / this.refillPerMs / 1000)),
    }
  }
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSeconds),
  }
}

function refused(decision: RateDecision, message: string): AppError {
  return new AppError(
    'rate_limited',
    `${message}; try again in ${decision.resetSeconds} s.`,
    { retry_after_seconds: decision.resetSeconds },
    {
      'Retry-After': String(decision.resetSeconds),
      ...rateHeaders(decision),
    },
  )
}

/** Draws `cost` tokens (one per operation: a GraphQL mutation's root fields each count). */
export type CallerRateLimiter = (caller: Caller, cost?: number) => Promise<RateDecision | null>

/**
 * One bucket per user: every agent token of a user and the user's sessions share it, so minting
 * (or revoking and re-minting) tokens cannot multiply the budget. `0` disables.
 */
export function createRateLimiter(
  perMinute: number,
  store: RateLimitStore = new MemoryTokenBuckets(perMinute),
): CallerRateLimiter {
  if (perMinute === 0) return async () => null
  return async (caller, cost = 1) => {
    const decision = await store.take(`user:${caller.userId}`, Date.now(), cost)
    if (!decision.allowed) {
      throw refused(
        decision,
        cost > 1 ? `Too many requests (this one counts as ${cost})` : 'Too many requests',
      )
    }
    return decision
  }
}

/** The client-address key used when the runtime cannot say (app.handle in tests, no socket). */
export const UNKNOWN_CLIENT = 'unknown'

/**
 * Failed authentication, limited per client address: once an address has spent its budget of
 * failures, its requests are refused with 429 before any credential is verified, so guessing
 * costs no lookups. Successes draw nothing. `0` disables.
 *
 * Only addresses that failed in this process within the last minute are looked up in the store,
 * so a clean client costs nothing extra even when the buckets live in the database; an address
 * failing on another worker is caught here after its first failure here.
 */
export function limitAuthFailures(
  resolve: CallerResolver,
  perMinute: number,
  store: RateLimitStore = new MemoryTokenBuckets(perMinute),
): CallerResolver {
  if (perMinute === 0) return resolve
  const recentFailures = new Map<string, number>()
  return async (authorization, client = UNKNOWN_CLIENT, request) => {
    const key = `auth-failure:${client}`
    const failedAt = recentFailures.get(client)
    if (failedAt !== undefined && Date.now() - failedAt < 60_000) {
      const budget = await store.peek(key, Date.now())
      if (!budget.allowed)
        throw refused(budget, 'Too many failed authentication attempts from this address')
    }
    try {
      return await resolve(authorization, client, request)
    } catch (error) {
      // A missing header guesses nothing; a presented credential that fails does.
      if (authorization && error instanceof AppError && error.code === 'unauthorized') {
        const now = Date.now()
        if (recentFailures.size > 100_000) {
          for (const [address, at] of recentFailures)
            if (now - at >= 60_000) recentFailures.delete(address)
        }
        recentFailures.set(client, now)
        await store.take(key, now)
      }
      throw error
    }
  }
}
