import type { Caller } from './caller'

/**
 * The claim rule, in one place: a claim is live while `claim_id` is set and its lease lies in
 * the future. An expired lease is simply not live, so nothing ever sweeps claims. The SQL
 * fragments take their placeholders as arguments so positional (`?`) and named (`:now`)
 * statements share them; `isLiveClaim` is the same rule for rows already read.
 */
export const claimSql = {
  live: (now: string) => `(claim_id IS NOT NULL AND lease_expires_at > ${now})`,
  /** The claim, live or not, names this claimant. */
  holder: (kind: string, id: string) => `(claim_kind = ${kind} AND claim_id = ${id})`,
  heldBy: (now: string, kind: string, id: string) =>
    `(${claimSql.live(now)} AND ${claimSql.holder(kind, id)})`,
  heldByOther: (now: string, kind: string, id: string) =>
    `(${claimSql.live(now)} AND NOT ${claimSql.holder(kind, id)})`,
  /**
   * What claim next may pick (CONTRACT 7): in the inbox, pending, no live lease, not delayed,
   * and not stuck. Column names are unqualified: use it on `items`.
   */
  claimable: (now: string, maxAttempts: string) =>
    `(requested_action IS NOT NULL AND workflow_status = 'pending' AND NOT ${claimSql.live(now)}
      AND (available_at IS NULL OR available_at <= ${now}) AND attempts < ${maxAttempts})`,
  /**
   * The agent token still works: not revoked, not expired. Part of every write an agent token
   * makes, so a request already past authentication when its token is revoked changes nothing.
   */
  tokenActive: (id: string, now: string) =>
    `EXISTS (SELECT 1 FROM agent_tokens WHERE id = ${id} AND revoked_at IS NULL AND expires_at > ${now})`,
  /** Pending with no live lease, but out of attempts: only the owner's revoke or a reopen frees it. */
  stuck: (now: string, maxAttempts: string) =>
    `(requested_action IS NOT NULL AND workflow_status = 'pending' AND NOT ${claimSql.live(now)} AND attempts >= ${maxAttempts})`,
}

export function isLiveClaim(
  claimId: unknown,
  leaseExpiresAtMs: number | null,
  now: number,
): boolean {
  return claimId !== null && leaseExpiresAtMs !== null && leaseExpiresAtMs > now
}

/** When a lease taken now ends: never after the agent token that holds it expires. */
export function leaseEnd(caller: Caller, now: number, leaseSeconds: number): number {
  const end = now + leaseSeconds * 1000
  return caller.kind === 'agent_token' ? Math.min(end, caller.expiresAt) : end
}
