/**
 * The claim rule, in one place: a claim is live while `claim_id` is set and its lease lies in
 * the future. An expired lease is simply not live, so nothing ever sweeps claims. The SQL
 * fragments take their placeholders as arguments so positional (`?`) and named (`:now`)
 * statements share them; `isLiveClaim` is the same rule for rows already read.
 */
export const claimSql = {
  live: (now: string) => `(claim_id IS NOT NULL AND lease_expires_at > ${now})`,
  heldBy: (now: string, kind: string, id: string) => `(${claimSql.live(now)} AND claim_kind = ${kind} AND claim_id = ${id})`,
  heldByOther: (now: string, kind: string, id: string) =>
    `(${claimSql.live(now)} AND NOT (claim_kind = ${kind} AND claim_id = ${id}))`,
}

export function isLiveClaim(claimId: unknown, leaseExpiresAtMs: number | null, now: number): boolean {
  return claimId !== null && leaseExpiresAtMs !== null && leaseExpiresAtMs > now
}
