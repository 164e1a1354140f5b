import { randomBytes } from 'node:crypto'
import { invalid } from '../errors'

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

/**
 * Characters a token name may not hold: C0/C1 controls (NUL, and ESC, which starts ANSI
 * escape sequences that rewrite a terminal showing the name) and the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069) that make a name read differently
 * from what it is.
 */
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

/** 400 for a token name holding any of them; REST and GraphQL call it before the domain. */
export function refuseUnsafeTokenName(name: unknown): void {
  if (typeof name === 'string' && UNSAFE_TEXT.test(name)) {
    throw invalid(
      'name may not contain control characters, escape sequences or bidirectional overrides.',
      { field: 'name' },
    )
  }
}
