import { describe, expect, test } from 'bun:test'
import { SignJWT } from 'jose'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setup, sessionToken, expectEnvelope, JWT_SECRET } from './helpers'
import { loadConfig, ConfigError } from '../src/config'

const key = new TextEncoder().encode(JWT_SECRET)
/** A session JWT with raw `iat` / `exp` claims, as an attacker would sign one with a stolen key. */
const signed = (claims: { iat?: number; exp: number }) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').sign(key)

describe('session JWT lifetime ceiling (issue 15 row 12)', () => {
  test('exp - iat over JWT_MAX_AGE_SECONDS, exp far ahead without iat, and exp = 1e308 are 401', async () => {
    const ctx = await setup({ JWT_MAX_AGE_SECONDS: '3600' })
    const now = Math.floor(Date.now() / 1000)
    const refused = [
      await signed({ iat: now, exp: now + 3601 }),
      await signed({ exp: now + 7200 }),
      await signed({ iat: now, exp: 1e308 }),
      await signed({ exp: 1e308 }),
      // A future iat must not stretch the window.
      await signed({ iat: now + 86400, exp: now + 86400 + 60 }),
    ]
    for (const token of refused) {
      const res = await ctx.json('GET', '/api/saved/items', { token })
      expect(res.status).toBe(401)
      expectEnvelope(res.body, 'unauthorized')
      expect(res.res.headers.get('www-authenticate')).toContain('token lifetime too long')
      const gql = await ctx.request('POST', '/graphql', {
        token,
        body: { query: '{ items { edges { cursor } } }' },
      })
      expect(gql.status).toBe(401)
    }
    for (const token of [
      await signed({ iat: now, exp: now + 3600 }),
      await signed({ exp: now + 3000 }),
    ]) {
      expect((await ctx.request('GET', '/api/saved/items', { token })).status).toBe(200)
    }
  })

  test('the default ceiling is 30 days', async () => {
    const ctx = await setup()
    expect(ctx.config.jwt.maxAgeSeconds).toBe(30 * 86400)
    expect(
      (
        await ctx.request('GET', '/api/saved/items', {
          token: await sessionToken('alice', { expiresIn: '30d' }),
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await ctx.request('GET', '/api/saved/items', {
          token: await sessionToken('alice', { expiresIn: '31d' }),
        })
      ).status,
    ).toBe(401)
  })

  test('a plain-http JWT_JWKS_URL is refused at start in production, allowed in development', () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-jwks-'))
    let error: unknown
    try {
      loadConfig({
        NODE_ENV: 'production',
        DATA_DIR: dir,
        JWT_JWKS_URL: 'http://idp.example/jwks.json',
        URL_SIGNING_SECRET: 'u'.repeat(32),
      })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('JWT_JWKS_URL')
    expect(
      loadConfig({
        DATA_DIR: dir,
        JWT_JWKS_URL: 'http://idp.example/jwks.json',
        URL_SIGNING_SECRET: 'u'.repeat(32),
      }).jwt.kind,
    ).toBe('jwks')
    expect(
      loadConfig({
        NODE_ENV: 'production',
        DATA_DIR: dir,
        JWT_JWKS_URL: 'https://idp.example/jwks.json',
        URL_SIGNING_SECRET: 'u'.repeat(32),
      }).jwt.kind,
    ).toBe('jwks')
  })
})
