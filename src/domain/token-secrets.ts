import { randomBytes } from 'node:crypto'

/** Every personal agent token starts with this, so a bearer value is routed without a lookup. */
export const AGENT_TOKEN_PREFIX = 'sat_'

/** `sat_` + 32 random bytes in base64url (43 characters). */
export function generateAgentToken(): string {
  return AGENT_TOKEN_PREFIX + randomBytes(32).toString('base64url')
}

/** SHA-256 hex of the whole raw token; the only form that is stored. */
export function hashAgentToken(raw: string): string {
  return new Bun.CryptoHasher('sha256').update(raw).digest('hex')
}

/** A well-formed token: the prefix and 43 base64url characters. Anything else is not looked up. */
export function isWellFormedAgentToken(raw: string): boolean {
  return /^sat_[A-Za-z0-9_-]{43}$/.test(raw)
}

export function tokenHint(raw: string): string {
  return raw.slice(-4)
}
