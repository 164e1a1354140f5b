import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, expectEnvelope } from './helpers'
import { hashAgentToken } from '../src/domain/token-secrets'

describe('agent tokens', () => {
  test('creation returns the raw secret once; only its hash is stored; the list never shows it', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const created = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: { name: 'calendar bot', scopes: ['read_items'], expires_in_days: '7' },
    })
    expect(created.status).toBe(200)
    const raw: string = created.body.token
    expect(raw).toMatch(/^sat_[A-Za-z0-9_-]{43}$/)
    expect(created.body.token_hint).toBe(raw.slice(-4))
    expect(created.body.scopes).toEqual(['read_items'])
    const days =
      (Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)) / 86_400_000
    expect(days).toBe(7)

    const stored = await ctx.db.$client.execute('SELECT * FROM agent_tokens')
    expect(stored.rows[0]!.token_hash).toBe(hashAgentToken(raw))
    expect(JSON.stringify(stored.rows)).not.toContain(raw.slice(4))

    const list = await ctx.json('GET', '/api/saved/agent-tokens', { token: session })
    expect(list.body.tokens).toHaveLength(1)
    expect(Object.keys(list.body.tokens[0]).sort()).toEqual(
      ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'scopes', 'token_hint'].sort(),
    )
    expect(JSON.stringify(list.body)).not.toContain(raw)
  })

  test('default lifetime is 90 days', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const { body } = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: { name: 'n', scopes: ['read_items'] },
    })
    expect((Date.parse(body.expires_at) - Date.parse(body.created_at)) / 86_400_000).toBe(90)
  })

  test('validation of name, scopes and expires_in_days; nothing is created', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const bad = [
      {},
      { name: '', scopes: ['read_items'] },
      { name: 'x'.repeat(101), scopes: ['read_items'] },
      { name: 'n', scopes: [] },
      { name: 'n', scopes: ['admin'] },
      { name: 'n', scopes: 'read_items' },
      { name: 'n', scopes: ['read_items'], expires_in_days: 30 },
      { name: 'n', scopes: ['read_items'], expires_in_days: '0' },
      { name: 'n', scopes: ['read_items'], expires_in_days: '366' },
      { name: 'n', scopes: ['read_items'], expires_in_days: '1.5' },
      { name: 'n', scopes: ['read_items'], expires_in_days: ' 5' },
      { name: 'n', scopes: ['read_items'], extra: true },
    ]
    for (const body of bad) {
      const res = await ctx.json('POST', '/api/saved/agent-tokens', { token: session, body })
      expect({ body, status: res.status }).toEqual({ body, status: 400 })
      expectEnvelope(res.body, 'invalid_request')
    }
    const ok = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: { name: 'n', scopes: ['read_items'], expires_in_days: '365' },
    })
    expect(ok.status).toBe(200)
    expect(
      (await ctx.json('GET', '/api/saved/agent-tokens', { token: session })).body.tokens,
    ).toHaveLength(1)
  })

  test('at most 50 active tokens, also under concurrent creation; revoking frees a place', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        ctx.json('POST', '/api/saved/agent-tokens', {
          token: session,
          body: { name: `t${i}`, scopes: ['read_items'] },
        }),
      ),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(50)
    const refused = results.filter((r) => r.status === 409)
    expect(refused).toHaveLength(10)
    expectEnvelope(refused[0]!.body, 'token_limit_reached')
    const first = results.find((r) => r.status === 200)!.body
    expect(
      (await ctx.request('DELETE', `/api/saved/agent-tokens/${first.id}`, { token: session }))
        .status,
    ).toBe(204)
    const again = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: { name: 'again', scopes: ['read_items'] },
    })
    expect(again.status).toBe(200)
  })

  test('revocation takes effect at once and the token leaves the list', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    expect((await ctx.request('GET', '/api/saved/items', { token: agent.token })).status).toBe(200)
    const del = await ctx.request('DELETE', `/api/saved/agent-tokens/${agent.id}`, {
      token: session,
    })
    expect(del.status).toBe(204)
    expect(await del.text()).toBe('')
    expect((await ctx.request('GET', '/api/saved/items', { token: agent.token })).status).toBe(401)
    expect(
      (await ctx.json('GET', '/api/saved/agent-tokens', { token: session })).body.tokens,
    ).toHaveLength(0)
    // A second revocation is a 404: the token is no longer active.
    expect(
      (await ctx.request('DELETE', `/api/saved/agent-tokens/${agent.id}`, { token: session }))
        .status,
    ).toBe(404)
  })

  test("another user's token id answers exactly like an unknown id", async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    const bob = await sessionToken('bob')
    const agent = await agentToken(ctx, alice)
    const foreign = await ctx.json('DELETE', `/api/saved/agent-tokens/${agent.id}`, { token: bob })
    const unknown = await ctx.json('DELETE', '/api/saved/agent-tokens/tok_doesnotexist', {
      token: bob,
    })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual(unknown.body)
    expect((await ctx.json('GET', '/api/saved/agent-tokens', { token: bob })).body.tokens).toEqual(
      [],
    )
    expect((await ctx.request('GET', '/api/saved/items', { token: agent.token })).status).toBe(200)
  })

  test('last_used_at is written on first use and then at most once a minute', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    for (let i = 0; i < 20; i++)
      await ctx.request('GET', '/api/saved/items', { token: agent.token })
    const { body } = await ctx.json('GET', '/api/saved/agent-tokens', { token: session })
    const used = body.tokens[0].last_used_at
    expect(used).not.toBeNull()
    // Backdate it by 30 s: still inside the minute, so no further write happens.
    const backdated = Date.parse(used) - 30_000
    await ctx.db.$client.execute({
      sql: 'UPDATE agent_tokens SET last_used_at = ?',
      args: [backdated],
    })
    for (let i = 0; i < 5; i++) await ctx.request('GET', '/api/saved/items', { token: agent.token })
    const after = await ctx.json('GET', '/api/saved/agent-tokens', { token: session })
    expect(Date.parse(after.body.tokens[0].last_used_at)).toBe(backdated)
  })
})
