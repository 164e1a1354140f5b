import { jwtVerify, createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose'
import type { JwtConfig } from '../config'

/** The algorithm allow-list. `none` and anything else are refused before any key is tried. */
const HMAC_ALGORITHMS = ['HS256']
const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
]

export type JwtResult =
  | { ok: true; userId: string }
  | { ok: false; reason: 'expired' | 'invalid' | 'too_long' }

export type SessionVerifier = (token: string) => Promise<JwtResult>

/** Verified session tokens remembered, at most this many (oldest forgotten first). */
const VERIFIED_CACHE_SIZE = 10_000

/**
 * Builds the session-JWT verifier once per app: the JWKS is fetched lazily and cached by jose;
 * an HS256 secret is imported as a CryptoKey once, not on every request.
 *
 * A token that verified is remembered until its `exp`: a JWT's validity depends only on its
 * bytes and the clock (there is no revocation list), so the answer cannot change before then,
 * and a signature check costs 50–90 µs a request.
 */
export function createSessionVerifier(config: JwtConfig): SessionVerifier {
  const key: Promise<CryptoKey> | JWTVerifyGetKey =
    config.kind === 'secret'
      ? crypto.subtle.importKey(
          'raw',
          config.secret as Uint8Array<ArrayBuffer>,
          { name: 'HMAC', hash: 'SHA-256' },
          false,
          ['verify'],
        )
      : createRemoteJWKSet(config.url, { cacheMaxAge: 10 * 60_000 })
  const verified = new Map<string, { userId: string; exp: number }>()
  const options = {
    algorithms: config.kind === 'secret' ? HMAC_ALGORITHMS : ASYMMETRIC_ALGORITHMS,
    issuer: config.issuer,
    audience: config.audience,
    requiredClaims: ['sub', 'exp'],
  }
  return async (token) => {
    const known = verified.get(token)
    if (known) {
      if (known.exp > Date.now() / 1000) return { ok: true, userId: known.userId }
      verified.delete(token)
      return { ok: false, reason: 'expired' }
    }
    try {
      const { payload } =
        typeof key === 'function'
          ? await jwtVerify(token, key, options)
          : await jwtVerify(token, await key, options)
      if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 200) {
        return { ok: false, reason: 'invalid' }
      }
      // A lifetime ceiling: a stolen token with `exp` in the year 3000 (or 1e308) must not be a
      // session for ever. Both the issued lifetime and the time left count, so a future `iat`
      // cannot stretch it.
      const now = Math.floor(Date.now() / 1000)
      const exp = payload.exp ?? 0
      if (
        exp - now > config.maxAgeSeconds ||
        (payload.iat !== undefined && exp - payload.iat > config.maxAgeSeconds)
      ) {
        return { ok: false, reason: 'too_long' }
      }
      if (verified.size >= VERIFIED_CACHE_SIZE) {
        const oldest = verified.keys().next().value
        if (oldest !== undefined) verified.delete(oldest)
      }
      verified.set(token, { userId: payload.sub, exp })
      return { ok: true, userId: payload.sub }
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { ok: false, reason: 'expired' }
      return { ok: false, reason: 'invalid' }
    }
  }
}
