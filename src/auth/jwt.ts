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

/** Builds the session-JWT verifier once per app: the JWKS is fetched lazily and cached by jose. */
export function createSessionVerifier(config: JwtConfig): SessionVerifier {
  const key: Uint8Array | JWTVerifyGetKey =
    config.kind === 'secret'
      ? config.secret
      : createRemoteJWKSet(config.url, { cacheMaxAge: 10 * 60_000 })
  const options = {
    algorithms: config.kind === 'secret' ? HMAC_ALGORITHMS : ASYMMETRIC_ALGORITHMS,
    issuer: config.issuer,
    audience: config.audience,
    requiredClaims: ['sub', 'exp'],
  }
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, key as Uint8Array, options)
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
      return { ok: true, userId: payload.sub }
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { ok: false, reason: 'expired' }
      return { ok: false, reason: 'invalid' }
    }
  }
}
