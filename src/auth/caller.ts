import type { Db } from '../db/client'
import { AppError } from '../errors'
import type { Caller } from '../domain/caller'
import { verifyAgentToken } from '../domain/agent-tokens'
import { ensureUser } from '../domain/users'
import { AGENT_TOKEN_PREFIX, isWellFormedAgentToken } from '../domain/token-secrets'
import type { Clock } from '../domain/deps'
import type { SessionVerifier } from './jwt'

const CHALLENGE = 'Bearer realm="saved"'

function unauthorized(message: string, description?: string): AppError {
  return new AppError('unauthorized', message, undefined, {
    'WWW-Authenticate': description
      ? `${CHALLENGE}, error="invalid_token", error_description="${description}"`
      : CHALLENGE,
  })
}

/**
 * `client` is the caller's network address (for the failed-authentication limit), when known;
 * `request` lets the app resolve each request once however many steps ask.
 */
export type CallerResolver = (
  authorization: string | null | undefined,
  client?: string,
  request?: Request,
) => Promise<Caller>

/**
 * The one place a bearer header becomes a caller (CONTRACT 1): `sat_…` is an agent token,
 * anything else a session JWT. Every failure is 401 with an RFC 6750 challenge.
 */
export function createCallerResolver(
  db: Db,
  verifySession: SessionVerifier,
  clock: Clock,
): CallerResolver {
  const lastUsedWrites = new Map<string, number>()
  const knownUsers = new Set<string>()

  return async (authorization) => {
    if (!authorization)
      throw unauthorized('Authentication required: send Authorization: Bearer <token>.')
    const match = /^Bearer ([\x21-\x7e]+)$/i.exec(authorization.trim())
    if (!match)
      throw unauthorized(
        'Malformed Authorization header; expected "Bearer <token>".',
        'malformed header',
      )
    const token = match[1] ?? ''

    if (token.startsWith(AGENT_TOKEN_PREFIX)) {
      const verified = isWellFormedAgentToken(token)
        ? await verifyAgentToken(db, token, lastUsedWrites, clock.now())
        : null
      if (!verified)
        throw unauthorized('The agent token is invalid, expired or revoked.', 'invalid agent token')
      return {
        kind: 'agent_token',
        userId: verified.userId,
        tokenId: verified.id,
        tokenName: verified.name,
        scopes: verified.scopes,
        expiresAt: verified.expiresAt,
      }
    }

    const result = await verifySession(token)
    if (!result.ok) {
      throw result.reason === 'expired'
        ? unauthorized('The session token has expired.', 'token expired')
        : result.reason === 'too_long'
          ? unauthorized(
              'The session token lives longer than this server accepts (JWT_MAX_AGE_SECONDS).',
              'token lifetime too long',
            )
          : unauthorized('The session token is invalid.', 'invalid token')
    }
    // A user is known from the first valid JWT that names them; remembered to avoid a write per request.
    if (!knownUsers.has(result.userId)) {
      await ensureUser(db, result.userId, clock.now())
      knownUsers.add(result.userId)
    }
    return { kind: 'user', userId: result.userId }
  }
}
