import { jwtVerify, createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose'
import type { JwtConfig } from '../config'

/** The algorithm allow-list. `none` and anything else are refused before any key is tried. */
const HMAC_ALGORITHMS = ['HS256']
const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

export type JwtResult = { ok: true; userId: string } | { ok: false; reason: 'expired' | 'invalid' }

export type SessionVerifier = (token: string) => Promise<JwtResult>

/** Builds the session-JWT verifier once per app: the JWKS is fetched lazily and cached by jose. */
export function createSessionVerifier(config: JwtConfig): SessionVerifier {
  const key: Uint8Array | JWTVerifyGetKey =
    config.kind === 'secret' ? config.secret : createRemoteJWKSet(config.url, { cacheMaxAge: 10 * 60_000 })
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
      return { ok: true, userId: payload.sub }
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { ok: false, reason: 'expired' }
      return { ok: false, reason: 'invalid' }
    }
  }
}
