import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { setup, JWT_SECRET } from './helpers'

// A real identity provider's key set, served over HTTP by the test itself.
let server: ReturnType<typeof Bun.serve>
let privateKey: CryptoKey
let otherKey: CryptoKey

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true })
  privateKey = pair.privateKey
  otherKey = (await generateKeyPair('ES256')).privateKey
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => Response.json({ keys: [jwk] }),
  })
})
afterAll(() => server.stop(true))

const env = () => ({
  JWT_SECRET: '',
  JWT_JWKS_URL: `http://127.0.0.1:${server.port}/jwks.json`,
  JWT_ISSUER: 'https://idp.test/',
  JWT_AUDIENCE: 'saved-api',
})

const sign = (
  claims: { iss?: string; aud?: string; sub?: string } = {},
  key: CryptoKey = privateKey,
  alg = 'RS256',
  kid = 'k1',
) =>
  new SignJWT({})
    .setProtectedHeader({ alg, kid })
    .setSubject(claims.sub ?? 'carol')
    .setIssuer(claims.iss ?? 'https://idp.test/')
    .setAudience(claims.aud ?? 'saved-api')
    .setExpirationTime('10m')
    .sign(key)

describe('session JWTs through a JWKS', () => {
  test('a token signed by the provider with the right issuer and audience is a session', async () => {
    const ctx = await setup(env())
    const res = await ctx.json('GET', '/api/saved/agent-tokens', { token: await sign() })
    expect(res.status).toBe(200)
    const users = await ctx.db.$client.execute('SELECT id FROM users')
    expect(users.rows.map((r) => r.id)).toEqual(['carol'])
  })

  test('wrong issuer, wrong audience, foreign key, unknown kid and an HS256 token are 401', async () => {
    const ctx = await setup(env())
    const tokens = [
      await sign({ iss: 'https://evil.test/' }),
      await sign({ aud: 'another-api' }),
      await sign({}, otherKey, 'ES256'),
      await sign({}, privateKey, 'RS256', 'k2'),
      // Algorithm confusion: an HMAC token must never be checked against the provider's keys.
      await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('carol')
        .setIssuer('https://idp.test/')
        .setAudience('saved-api')
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(JWT_SECRET)),
    ]
    for (const token of tokens) {
      const res = await ctx.json('GET', '/api/saved/items', { token })
      expect(res.status).toBe(401)
      expect(res.body.error.code).toBe('unauthorized')
    }
  })
})
