import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, createItem } from './helpers'

/**
 * Remote (Turso) and in-memory databases read through @libsql/client instead of the native
 * prepared-statement cache; this runs the main flows on that path, over DATABASE_URL=:memory:.
 */
describe('the @libsql/client read path (as used with Turso)', () => {
  test('tokens, items, filters, claims, inbox, history and GraphQL work the same', async () => {
    const ctx = await setup({ DATABASE_URL: ':memory:' })
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const a = await createItem(ctx, session, { tags: ['x', 'y'], requested_action: 'calendar' })
    await createItem(ctx, session, { tags: ['y'] })
    const list = await ctx.json('GET', '/api/saved/items?tags=x,y', { token: agent.token })
    expect(list.body.items.map((i: any) => i.id)).toEqual([a.id])
    const claim = await ctx.json('PATCH', `/api/saved/items/${a.id}`, {
      token: agent.token,
      body: { claim_action: 'claim' },
    })
    expect(claim.body.claim_status).toBe('mine')
    expect(
      (await ctx.json('GET', '/api/saved/inbox?claim_status=mine', { token: agent.token })).body
        .items,
    ).toHaveLength(1)
    expect(
      (await ctx.json('GET', `/api/saved/items/${a.id}/history`, { token: agent.token })).body
        .events,
    ).toHaveLength(1)
    const gql = await ctx.json('POST', '/graphql', {
      token: agent.token,
      body: {
        query: `{ items(tag: "x") { edges { node { id claimStatus history { action } } } } }`,
      },
    })
    expect(gql.body.data.items.edges[0].node).toEqual({
      id: a.id,
      claimStatus: 'MINE',
      history: [{ action: 'claim' }],
    })
    expect(
      (await ctx.json('DELETE', `/api/saved/agent-tokens/${agent.id}`, { token: session })).status,
    ).toBe(204)
    expect((await ctx.json('GET', '/api/saved/items', { token: agent.token })).status).toBe(401)
  })
})
