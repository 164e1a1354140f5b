import { and, eq, gt, isNull, sql, desc } from 'drizzle-orm'
import type { Db } from '../db/client'
import { agentTokens, type AgentTokenRow } from '../db/tables'
import { AppError, invalid, notFound } from '../errors'
import { generateAgentToken, hashAgentToken, tokenHint } from '../auth/tokens'
import { AGENT_TOKEN_SCOPES, requireSession, type AgentTokenScope, type Caller } from './caller'
import { newId, iso } from './ids'

export const MAX_ACTIVE_TOKENS = 50
export const DEFAULT_EXPIRES_IN_DAYS = 90
const LAST_USED_WRITE_INTERVAL_MS = 60_000

export interface AgentTokenView {
  id: string
  name: string
  scopes: AgentTokenScope[]
  created_at: string
  expires_at: string
  last_used_at: string | null
  token_hint: string
}

export interface CreateAgentTokenInput {
  name: unknown
  scopes: unknown
  expires_in_days?: unknown
}

function view(row: AgentTokenRow): AgentTokenView {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes),
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    last_used_at: row.lastUsedAt === null ? null : iso(row.lastUsedAt),
    token_hint: row.tokenHint,
  }
}

function parseCreate(input: CreateAgentTokenInput): { name: string; scopes: AgentTokenScope[]; days: number } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('The body must be a JSON object.')
  for (const key of Object.keys(input)) {
    if (!['name', 'scopes', 'expires_in_days'].includes(key)) throw invalid(`Unknown property "${key}".`, { field: key })
  }
  const { name, scopes, expires_in_days } = input
  if (typeof name !== 'string' || name.trim().length < 1 || name.length > 100) {
    throw invalid('name must be a string of 1 to 100 characters.', { field: 'name' })
  }
  if (!Array.isArray(scopes) || scopes.length === 0) {
    throw invalid('scopes must be a non-empty array of read_items and/or update_workflow_status.', { field: 'scopes' })
  }
  for (const scope of scopes) {
    if (!AGENT_TOKEN_SCOPES.includes(scope)) {
      throw invalid(`Unknown scope "${String(scope)}"; allowed: ${AGENT_TOKEN_SCOPES.join(', ')}.`, { field: 'scopes' })
    }
  }
  let days = DEFAULT_EXPIRES_IN_DAYS
  if (expires_in_days !== undefined) {
    // Typed as a string by the interface; a whole number 1..365 written in digits only.
    if (typeof expires_in_days !== 'string' || !/^\d{1,3}$/.test(expires_in_days)) {
      throw invalid('expires_in_days must be a string holding a whole number from 1 to 365.', { field: 'expires_in_days' })
    }
    days = Number(expires_in_days)
    if (days < 1 || days > 365) {
      throw invalid('expires_in_days must be a string holding a whole number from 1 to 365.', { field: 'expires_in_days' })
    }
  }
  return { name: name.trim(), scopes: [...new Set(scopes as AgentTokenScope[])], days }
}

/** Creates a token for the signed-in user. The raw secret is in this answer and nowhere else. */
export async function createAgentToken(db: Db, caller: Caller, input: CreateAgentTokenInput, now = Date.now()) {
  requireSession(caller)
  const { name, scopes, days } = parseCreate(input)
  const raw = generateAgentToken()
  const row: AgentTokenRow = {
    id: newId('tok'),
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
  const inserted = await db.$client.execute({
    sql: `INSERT INTO agent_tokens (id, user_id, name, scopes, token_hash, token_hint, created_at, expires_at)
          SELECT ?, ?, ?, ?, ?, ?, ?, ?
          WHERE (SELECT count(*) FROM agent_tokens
                 WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?) < ?`,
    args: [row.id, row.userId, row.name, row.scopes, row.tokenHash, row.tokenHint, row.createdAt, row.expiresAt,
      caller.userId, now, MAX_ACTIVE_TOKENS],
  })
  if (inserted.rowsAffected === 0) {
    throw new AppError('token_limit_reached', `A user can hold at most ${MAX_ACTIVE_TOKENS} active agent tokens; revoke one first.`)
  }
  return { ...view(row), token: raw }
}

/** Active tokens only: not revoked, not expired. Newest first. */
export async function listAgentTokens(db: Db, caller: Caller, now = Date.now()): Promise<AgentTokenView[]> {
  requireSession(caller)
  const rows = await db
    .select()
    .from(agentTokens)
    .where(and(eq(agentTokens.userId, caller.userId), isNull(agentTokens.revokedAt), gt(agentTokens.expiresAt, now)))
    .orderBy(desc(agentTokens.createdAt), desc(agentTokens.id))
  return rows.map(view)
}

/** Revokes one of the caller's tokens. Another user's token id answers like an unknown one. */
export async function revokeAgentToken(db: Db, caller: Caller, id: string, now = Date.now()): Promise<void> {
  requireSession(caller)
  const result = await db
    .update(agentTokens)
    .set({ revokedAt: now })
    .where(and(eq(agentTokens.id, id), eq(agentTokens.userId, caller.userId), isNull(agentTokens.revokedAt)))
    .returning({ id: agentTokens.id })
  if (result.length === 0) throw notFound('Agent token')
}

export interface VerifiedAgentToken {
  id: string
  userId: string
  name: string
  scopes: AgentTokenScope[]
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
  now = Date.now(),
): Promise<VerifiedAgentToken | null> {
  const [row] = await db.$query('SELECT id, user_id, name, scopes, expires_at, revoked_at FROM agent_tokens WHERE token_hash = ?', [hashAgentToken(raw)])
  if (!row || row.revoked_at !== null || Number(row.expires_at) <= now) return null
  const id = String(row.id)
  const last = lastUsedWrites.get(id) ?? 0
  if (now - last >= LAST_USED_WRITE_INTERVAL_MS) {
    lastUsedWrites.set(id, now)
    await db
      .update(agentTokens)
      .set({ lastUsedAt: now })
      .where(and(eq(agentTokens.id, id), sql`(${agentTokens.lastUsedAt} IS NULL OR ${agentTokens.lastUsedAt} <= ${now - LAST_USED_WRITE_INTERVAL_MS})`))
  }
  return { id, userId: String(row.user_id), name: String(row.name), scopes: JSON.parse(String(row.scopes)) }
}
