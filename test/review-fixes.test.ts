import { describe, expect, test } from 'bun:test'
import { agentToken, createItem, expectEnvelope, sessionToken, setup } from './helpers'
import { sseReader } from './sse'

// Defects a review of version 0.2 found, each reproduced (CONTRACT 3, 7, 8, 9, 10).
describe('a revoked agent token stops working at once, also mid-request', () => {
  test('a waiting claim next is told 401, and the item that arrives stays claimable', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const doomed = await agentToken(ctx, session, undefined, 'doomed')
    const other = await agentToken(ctx, session, undefined, 'other')
    const waiting = ctx.json('POST', '/api/saved/inbox/claim', {
      token: doomed.token,
      body: { wait_seconds: 10 },
    })
    await Bun.sleep(100)
    expect(
      (await ctx.request('DELETE', `/api/saved/agent-tokens/${doomed.id}`, { token: session }))
        .status,
    ).toBe(204)
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    const answer = await waiting
    expect(answer.status).toBe(401)
    expectEnvelope(answer.body, 'unauthorized')
    const taken = await ctx.json('POST', '/api/saved/inbox/claim', { token: other.token, body: {} })
    expect(taken.body.item.id).toBe(item.id)
  })

  test('its event stream ends before the next change is sent', async () => {
    const ctx = await setup({ SSE_KEEPALIVE_MS: '100' })
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session, ['read_items'])
    const res = await ctx.app.handle(
      new Request('http://localhost/api/saved/events', {
        headers: { authorization: `Bearer ${agent.token}` },
      }),
    )
    expect(res.status).toBe(200)
    const stream = sseReader(res)
    await createItem(ctx, session, { title: 'seen' })
    expect((await stream.record(2000)).data.item.title).toBe('seen')
    await ctx.request('DELETE', `/api/saved/agent-tokens/${agent.id}`, { token: session })
    await createItem(ctx, session, { title: 'secret' })
    await expect(stream.next((e) => e.data !== undefined, 2000)).rejects.toThrow('stream ended')
  })
})

describe('MCP', () => {
  test('a JSON-RPC batch draws one rate-limit token per tool call', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '3' })
    const session = await sessionToken('alice')
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'whoami', arguments: {} },
    })
    const post = (body: unknown) =>
      ctx.app.handle(
        new Request('http://localhost/mcp', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${session}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-03-26',
          },
          body: JSON.stringify(body),
        }),
      )
    const batch = await post([call(1), call(2), call(3), call(4)])
    expect(batch.status).toBe(429)
    expectEnvelope(await batch.json(), 'rate_limited')
  })
})

describe('strict bodies', () => {
  test('an unknown property is named as unknown, nested ones by their path', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    const cases: [unknown, string][] = [
      [{ attempts: 0 }, 'attempts'],
      [{ corrections: { owner: 'x' } }, 'corrections.owner'],
      [{ claim_action: 'claim', user_id: 'bob' }, 'user_id'],
    ]
    for (const [body, field] of cases) {
      const res = await ctx.json('PATCH', `/api/saved/items/${item.id}`, { token: session, body })
      expect(res.status).toBe(400)
      expect(res.body.error).toMatchObject({
        message: `Unknown property "${field}".`,
        details: { field },
      })
    }
    const claim = await ctx.json('POST', '/api/saved/inbox/claim', {
      token: session,
      body: { foo: 1 },
    })
    expect(claim.body.error.message).toBe('Unknown property "foo".')
  })
})
