import { describe, expect, test } from 'bun:test'
import { SignJWT, UnsecuredJWT } from 'jose'
import {
  setup,
  sessionToken,
  agentToken,
  createItem,
  expectEnvelope,
  JWT_SECRET,
  type TestContext,
} from './helpers'

/**
 * The shared auth suite (CONTRACT 1): every route that exists is listed once here, with the
 * credential it needs, and every bad credential is tried against it. A new route joins by one line.
 */
type Need = 'read_items' | 'update_workflow_status' | 'session'
interface Route {
  method: string
  path: (ids: { item: string; token: string }) => string
  need: Need
  body?: unknown
}

export const ROUTES: Route[] = [
  { method: 'GET', path: () => '/api/saved/items', need: 'read_items' },
  { method: 'GET', path: (ids) => `/api/saved/items/${ids.item}`, need: 'read_items' },
  { method: 'GET', path: (ids) => `/api/saved/items/${ids.item}/history`, need: 'read_items' },
  { method: 'GET', path: () => '/api/saved/inbox', need: 'read_items' },
  {
    method: 'PATCH',
    path: (ids) => `/api/saved/items/${ids.item}`,
    need: 'update_workflow_status',
    body: { resolution_note: 'x' },
  },
  { method: 'POST', path: () => '/api/saved/items', need: 'session', body: { type: 'event' } },
  { method: 'GET', path: () => '/api/saved/agent-tokens', need: 'session' },
  {
    method: 'POST',
    path: () => '/api/saved/agent-tokens',
    need: 'session',
    body: { name: 'n', scopes: ['read_items'] },
  },
  { method: 'DELETE', path: (ids) => `/api/saved/agent-tokens/${ids.token}`, need: 'session' },
]

const secret = new TextEncoder().encode(JWT_SECRET)

async function fixture() {
  const ctx = await setup()
  const session = await sessionToken('alice')
  const item = await createItem(ctx, session, { requested_action: 'save' })
  const both = await agentToken(ctx, session, ['read_items', 'update_workflow_status'], 'both')
  const readOnly = await agentToken(ctx, session, ['read_items'], 'reader')
  const writeOnly = await agentToken(ctx, session, ['update_workflow_status'], 'writer')
  const revoked = await agentToken(
    ctx,
    session,
    ['read_items', 'update_workflow_status'],
    'revoked',
  )
  await ctx.request('DELETE', `/api/saved/agent-tokens/${revoked.id}`, { token: session })
  const expired = await agentToken(
    ctx,
    session,
    ['read_items', 'update_workflow_status'],
    'expired',
  )
  await ctx.db.$client.execute({
    sql: 'UPDATE agent_tokens SET expires_at = ? WHERE id = ?',
    args: [Date.now() - 1000, expired.id],
  })
  const spare = await agentToken(ctx, session, ['read_items'], 'spare')
  return {
    ctx,
    session,
    item: item.id as string,
    both,
    readOnly,
    writeOnly,
    revoked,
    expired,
    spare,
  }
}

async function badTokens() {
  const now = Math.floor(Date.now() / 1000)
  return {
    'bad signature': await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-another')),
    expired: await sessionToken('alice', { expiresIn: now - 60 }),
    'alg none': new UnsecuredJWT({ sub: 'alice', exp: now + 3600 }).encode(),
    'HS512 outside the allow-list': await new SignJWT({})
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject('alice')
      .setExpirationTime('1h')
      .sign(secret),
    'no sub': await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(secret),
    'no exp': await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .sign(secret),
    garbage: 'not-a-jwt',
    'unknown agent token': 'sat_' + 'A'.repeat(43),
    'truncated agent token': 'sat_short',
  }
}

async function send(
  ctx: TestContext,
  route: Route,
  ids: { item: string; token: string },
  headers: Record<string, string>,
) {
  return ctx.json(route.method, route.path(ids), { body: route.body, headers })
}

describe('auth matrix over every route', async () => {
  for (const route of ROUTES) {
    const label = `${route.method} ${route.path({ item: ':id', token: ':id' })}`
    test(`${label}: missing, malformed and invalid credentials are 401 with a challenge`, async () => {
      const f = await fixture()
      const ids = { item: f.item, token: f.spare.id }
      const cases: Record<string, Record<string, string>> = {
        'no header': {},
        'basic scheme': { authorization: 'Basic YWxpY2U6cHc=' },
        'bearer without token': { authorization: 'Bearer' },
        'two tokens': { authorization: 'Bearer a b' },
        'revoked agent token': { authorization: `Bearer ${f.revoked.token}` },
        'expired agent token': { authorization: `Bearer ${f.expired.token}` },
      }
      for (const [name, token] of Object.entries(await badTokens()))
        cases[name] = { authorization: `Bearer ${token}` }
      for (const [name, headers] of Object.entries(cases)) {
        const { status, body, res } = await send(f.ctx, route, ids, headers)
        expect({ name, status }).toEqual({ name, status: 401 })
        expectEnvelope(body, 'unauthorized')
        expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
      }
      // Nothing was changed by any refused request.
      const tokens = await f.ctx.json('GET', '/api/saved/agent-tokens', { token: f.session })
      expect(tokens.body.tokens).toHaveLength(4)
    })

    test(`${label}: scopes and sessions`, async () => {
      const f = await fixture()
      const ids = { item: f.item, token: f.spare.id }
      const ok = await send(f.ctx, route, ids, { authorization: `Bearer ${f.session}` })
      expect(ok.status).toBeLessThan(300)

      if (route.need === 'session') {
        for (const agent of [f.both, f.readOnly]) {
          const { status, body } = await send(f.ctx, route, ids, {
            authorization: `Bearer ${agent.token}`,
          })
          expect(status).toBe(401)
          expectEnvelope(body, 'session_required')
        }
        return
      }
      const holder = route.need === 'read_items' ? f.readOnly : f.writeOnly
      const lacking = route.need === 'read_items' ? f.writeOnly : f.readOnly
      expect(
        (await send(f.ctx, route, ids, { authorization: `Bearer ${holder.token}` })).status,
      ).toBeLessThan(300)
      expect(
        (await send(f.ctx, route, ids, { authorization: `Bearer ${f.both.token}` })).status,
      ).toBeLessThan(300)
      const refused = await send(f.ctx, route, ids, { authorization: `Bearer ${lacking.token}` })
      expect(refused.status).toBe(403)
      expectEnvelope(refused.body, 'insufficient_scope')
      expect(refused.res.headers.get('www-authenticate')).toBe(
        `Bearer realm="saved", error="insufficient_scope", scope="${route.need}"`,
      )
    })
  }

  test('an expired session is told apart from an invalid one', async () => {
    const ctx = await setup()
    const expired = await ctx.json('GET', '/api/saved/items', {
      token: await sessionToken('alice', { expiresIn: Math.floor(Date.now() / 1000) - 5 }),
    })
    const invalid = await ctx.json('GET', '/api/saved/items', { token: 'x.y.z' })
    expect(expired.body.error.message).toContain('expired')
    expect(expired.res.headers.get('www-authenticate')).toContain('token expired')
    expect(invalid.body.error.message).not.toContain('expired')
  })
})
