import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm'
import type { Db } from '../db/client'
import { agentTokens, type AgentTokenRow } from '../db/tables'
import { AppError, invalidField, notFound } from '../errors'
import { claimSql } from './claims'
import { requireSession, type AgentTokenScope, type Caller } from './caller'
import type { Deps } from './deps'
import { newId } from './ids'
import { generateAgentToken, hashAgentToken, tokenHint } from './token-secrets'

export const MAX_ACTIVE_TOKENS = 50
export const DEFAULT_EXPIRES_IN_DAYS = 90
const LAST_USED_WRITE_INTERVAL_MS = 60_000

/** A token as its owner sees it; the secret is never part of it. */
export interface AgentToken {
  id: string
  name: string
  scopes: AgentTokenScope[]
  createdAt: number
  expiresAt: number
  lastUsedAt: number | null
  tokenHint: string
}

export interface NewAgentToken {
  name: string
  scopes: AgentTokenScope[]
  /** Whole days, 1..365 (the interface types it as a string of digits). */
  expiresInDays?: string
}

function toAgentToken(row: AgentTokenRow): AgentToken {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes),
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    tokenHint: row.tokenHint,
  }
}

// Control characters, ANSI escapes' ESC, and bidirectional overrides that could disguise a name.
const UNSAFE_NAME = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

function checkNewToken(input: NewAgentToken): {
  name: string
  scopes: AgentTokenScope[]
  days: number
} {
  const name = input.name.trim()
  if (name.length < 1 || input.name.length > 100)
    throw invalidField('name', 'must be 1 to 100 characters')
  if (UNSAFE_NAME.test(name))
    throw invalidField('name', 'cannot hold control characters or direction overrides')
  if (input.scopes.length === 0) throw invalidField('scopes', 'must hold at least one scope')
  let days = DEFAULT_EXPIRES_IN_DAYS
  if (input.expiresInDays !== undefined) {
    const rule = 'must be a string holding a whole number from 1 to 365'
    if (!/^\d{1,3}$/.test(input.expiresInDays)) throw invalidField('expiresInDays', rule)
    days = Number(input.expiresInDays)
    if (days < 1 || days > 365) throw invalidField('expiresInDays', rule)
  }
  return { name, scopes: [...new Set(input.scopes)], days }
}

/** Creates a token for the signed-in user. The raw secret is in this answer and nowhere else. */
export async function createAgentToken(
  deps: Deps,
  caller: Caller,
  input: NewAgentToken,
): Promise<AgentToken & { token: string }> {
  requireSession(caller)
  const { name, scopes, days } = checkNewToken(input)
  const now = deps.clock.now()
  const raw = generateAgentToken()
  const row: AgentTokenRow = {
    id: newId('tok', now),
    userId: caller.userId,
    name,
    scopes: JSON.stringify(scopes),
    tokenHash: hashAgentToken(raw),
    tokenHint: tokenHint(raw),
    createdAt: now,
    expiresAt: now + days * 86_400_000,
    lastUsedAt: null,
    revokedAt: null,
  }
  // One conditional INSERT enforces the cap, so concurrent creations cannot overshoot it.
  const inserted = await deps.db.$client.execute({
    sql: `INSERT INTO agent_tokens (id, user_id, name, scopes, token_hash, token_hint, created_at, expires_at)
          SELECT ?, ?, ?, ?, ?, ?, ?, ?
          WHERE (SELECT count(*) FROM agent_tokens
                 WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?) < ?`,
    args: [
      row.id,
      row.userId,
      row.name,
      row.scopes,
      row.tokenHash,
      row.tokenHint,
      row.createdAt,
      row.expiresAt,
      caller.userId,
      now,
      MAX_ACTIVE_TOKENS,
    ],
  })
  if (inserted.rowsAffected === 0) {
    throw new AppError(
      'token_limit_reached',
      `A user can hold at most ${MAX_ACTIVE_TOKENS} active agent tokens; revoke one first.`,
    )
  }
  return { ...toAgentToken(row), token: raw }
}

/** Active tokens only: not revoked, not expired. Newest first. */
export async function listAgentTokens(deps: Deps, caller: Caller): Promise<AgentToken[]> {
  requireSession(caller)
  const rows = await deps.db
    .select()
    .from(agentTokens)
    .where(
      and(
        eq(agentTokens.userId, caller.userId),
        isNull(agentTokens.revokedAt),
        gt(agentTokens.expiresAt, deps.clock.now()),
      ),
    )
    .orderBy(desc(agentTokens.createdAt), desc(agentTokens.id))
  return rows.map(toAgentToken)
}

/**
 * Revokes one of the caller's tokens, and in the same transaction ends every live claim it
 * holds (recorded as `revoke` by the owner), so a revoked agent's work is free at once.
 * Another user's token id answers like an unknown one.
 */
export async function revokeAgentToken(deps: Deps, caller: Caller, id: string): Promise<void> {
  requireSession(caller)
  const now = deps.clock.now()
  const p = { id, uid: caller.userId, now }
  const held = `user_id = :uid AND ${claimSql.heldBy(':now', "'agent_token'", ':id')}
    AND EXISTS (SELECT 1 FROM agent_tokens WHERE id = :id AND user_id = :uid AND revoked_at IS NULL)`
  const results = await deps.db.$batch([
    {
      sql: `INSERT INTO item_events (item_id, user_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note)
              SELECT id, user_id, :now, 'user', :uid, NULL, 'revoke', claim_id, 'available', claim_name FROM items WHERE ${held}`,
      args: p,
    },
    {
      sql: `UPDATE items SET claim_kind = NULL, claim_id = NULL, claim_name = NULL, lease_expires_at = NULL, lease_id = NULL,
                updated_at = :now WHERE ${held}`,
      args: p,
    },
    {
      sql: 'UPDATE agent_tokens SET revoked_at = :now WHERE id = :id AND user_id = :uid AND revoked_at IS NULL RETURNING id',
      args: p,
    },
  ])
  if (!results[2]?.rows.length) throw notFound('Agent token')
  deps.changes.poke()
}

export interface VerifiedAgentToken {
  id: string
  userId: string
  name: string
  scopes: AgentTokenScope[]
  expiresAt: number
}

/**
 * Verifies a raw agent token: known hash, not revoked, not expired. `lastUsedWrites` remembers
 * when this process last wrote `last_used_at` per token, so a busy agent costs one write a
 * minute, not one per request; the UPDATE is conditional too, for other processes.
 */
export async function verifyAgentToken(
  db: Db,
  raw: string,
  lastUsedWrites: Map<string, number>,
  now: number,
): Promise<VerifiedAgentToken | null> {
  const [row] = await db.$query(
    'SELECT id, user_id, name, scopes, expires_at, revoked_at FROM agent_tokens WHERE token_hash = ?',
    [hashAgentToken(raw)],
  )
  if (!row || row.revoked_at !== null || Number(row.expires_at) <= now) return null
  const id = String(row.id)
  const last = lastUsedWrites.get(id) ?? 0
  if (now - last >= LAST_USED_WRITE_INTERVAL_MS) {
    lastUsedWrites.set(id, now)
    await db
      .update(agentTokens)
      .set({ lastUsedAt: now })
      .where(
        and(
          eq(agentTokens.id, id),
          sql`(${agentTokens.lastUsedAt} IS NULL OR ${agentTokens.lastUsedAt} <= ${now - LAST_USED_WRITE_INTERVAL_MS})`,
        ),
      )
  }
  return {
    id,
    userId: String(row.user_id),
    name: String(row.name),
    scopes: JSON.parse(String(row.scopes)),
    expiresAt: Number(row.expires_at),
  }
}
