import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, createItem, type TestContext } from './helpers'

const gql = async (
  ctx: TestContext,
  token: string | undefined,
  query: string,
  variables: Record<string, unknown> = {},
) => {
  const res = await ctx.request('POST', '/graphql', { token, body: { query, variables } })
  return { status: res.status, body: (await res.json()) as any, res }
}

const ITEM_FIELDS =
  'id type status workflowStatus title summary actionNote resolutionNote tags requestedAction destinationKind destinationName claimStatus claimedBy { kind id name } leaseExpiresAt createdAt updatedAt'

/** REST item (snake_case) → the GraphQL shape, to compare the two front ends field by field. */
const camel = (item: any) => ({
  id: item.id,
  type: item.type.toUpperCase(),
  status: item.status.toUpperCase(),
  workflowStatus: item.workflow_status.toUpperCase(),
  title: item.title,
  summary: item.summary,
  actionNote: item.action_note,
  resolutionNote: item.resolution_note,
  tags: item.tags,
  requestedAction: item.requested_action?.toUpperCase() ?? null,
  destinationKind: item.destination_kind,
  destinationName: item.destination_name,
  claimStatus: item.claim_status.toUpperCase(),
  claimedBy: item.claimed_by
    ? { ...item.claimed_by, kind: item.claimed_by.kind.toUpperCase() }
    : null,
  leaseExpiresAt: item.lease_expires_at,
  createdAt: item.created_at,
  updatedAt: item.updated_at,
})

async function world() {
  const ctx = await setup()
  const session = await sessionToken('alice')
  const a = await agentToken(ctx, session, undefined, 'agent-a')
  const b = await agentToken(ctx, session, undefined, 'agent-b')
  const reader = await agentToken(ctx, session, ['read_items'], 'reader')
  for (let i = 0; i < 7; i++) {
    await createItem(ctx, session, {
      title: `Item ${i}`,
      tags: i % 2 ? ['odd', 'x'] : ['even', 'x'],
      requested_action: i % 3 ? 'save' : null,
    })
  }
  return { ctx, session, a: a.token, b: b.token, reader: reader.token }
}

describe('GraphQL parity with REST', () => {
  test('lists, filters, order and cursors are the same', async () => {
    const w = await world()
    for (const [rest, args] of [
      ['/api/saved/items?limit=3', 'first: 3'],
      ['/api/saved/items?tag=odd&tags=x', 'tag: "odd", tags: ["x"]'],
      ['/api/saved/items?type=event&limit=200', 'type: EVENT, first: 200'],
    ] as const) {
      const r = await w.ctx.json('GET', rest, { token: w.a })
      const g = await gql(
        w.ctx,
        w.a,
        `{ items(${args}) { edges { cursor node { ${ITEM_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
      )
      expect(g.body.errors).toBeUndefined()
      expect(g.body.data.items.edges.map((e: any) => e.node)).toEqual(r.body.items.map(camel))
      expect(g.body.data.items.pageInfo.hasNextPage).toBe(r.body.next_cursor !== null)
      if (r.body.next_cursor) expect(g.body.data.items.pageInfo.endCursor).toBe(r.body.next_cursor)
    }
    // Walking with `after` gives the REST walk.
    const r2 = await w.ctx.json('GET', `/api/saved/inbox?limit=2`, { token: w.a })
    const g2 = await gql(
      w.ctx,
      w.a,
      `{ inbox(first: 2, after: ${JSON.stringify(r2.body.next_cursor)}) { edges { node { id } } } }`,
    )
    const r3 = await w.ctx.json('GET', `/api/saved/inbox?limit=2&cursor=${r2.body.next_cursor}`, {
      token: w.a,
    })
    expect(g2.body.data.inbox.edges.map((e: any) => e.node.id)).toEqual(
      r3.body.items.map((i: any) => i.id),
    )
  })

  test('claims, conflicts and transitions come out the same', async () => {
    const w = await world()
    const id = (await w.ctx.json('GET', '/api/saved/inbox', { token: w.a })).body.items[0].id
    const update = (token: string, input: string) =>
      gql(
        w.ctx,
        token,
        `mutation($id: ID!) { updateItem(id: $id, input: ${input}) { ${ITEM_FIELDS} } }`,
        { id },
      )
    const claimed = await update(w.a, '{ claimAction: CLAIM, leaseSeconds: 60 }')
    expect(claimed.body.data.updateItem.claimStatus).toBe('MINE')
    const conflict = await update(w.b, '{ claimAction: CLAIM }')
    expect(conflict.body.errors[0].extensions.code).toBe('CLAIM_CONFLICT')
    const restConflict = await w.ctx.json('PATCH', `/api/saved/items/${id}`, {
      token: w.b,
      body: { claim_action: 'claim' },
    })
    expect(restConflict.body.error.code).toBe('claim_conflict')
    expect(conflict.body.errors[0].message).toBe(restConflict.body.error.message)
    const done = await update(w.a, '{ workflowStatus: DONE, resolutionNote: "ok" }')
    expect(done.body.data.updateItem).toMatchObject({
      workflowStatus: 'DONE',
      claimStatus: 'AVAILABLE',
      resolutionNote: 'ok',
    })
    const again = await update(w.a, '{ workflowStatus: DONE }')
    expect(again.body.errors[0].extensions.code).toBe('INVALID_TRANSITION')
    const bad = await update(w.a, '{ claimAction: RELEASE, leaseSeconds: 5 }')
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT')
    const history = await gql(
      w.ctx,
      w.a,
      `query($id: ID!) { item(id: $id) { history { action from to actor { kind name } } } }`,
      { id },
    )
    expect(history.body.data.item.history.map((e: any) => e.action)).toEqual([
      'claim',
      'done',
      'note',
    ])
  })

  test('scope refusals, corrections by agents, session-only operations and isolation', async () => {
    const w = await world()
    const id = (await w.ctx.json('GET', '/api/saved/items', { token: w.a })).body.items[0].id
    const scope = await gql(
      w.ctx,
      w.reader,
      `mutation { updateItem(id: "${id}", input: { claimAction: CLAIM }) { id } }`,
    )
    expect(scope.body.errors[0].extensions).toMatchObject({
      code: 'FORBIDDEN',
      reason: 'insufficient_scope',
    })
    const corrections = await gql(
      w.ctx,
      w.a,
      `mutation { updateItem(id: "${id}", input: { corrections: { title: "x" } }) { id } }`,
    )
    expect(corrections.body.errors[0].extensions).toMatchObject({
      code: 'FORBIDDEN',
      reason: 'forbidden',
    })
    const byOwner = await gql(
      w.ctx,
      w.session,
      `mutation { updateItem(id: "${id}", input: { corrections: { title: "Better", tags: ["a", "a", " b "] } }) { title tags } }`,
    )
    expect(byOwner.body.data.updateItem).toEqual({ title: 'Better', tags: ['a', 'b'] })
    const tokens = await gql(w.ctx, w.a, '{ agentTokens { id } }')
    expect(tokens.body.errors[0].extensions).toMatchObject({
      code: 'UNAUTHENTICATED',
      reason: 'session_required',
    })
    const bob = await sessionToken('bob')
    const foreign = await gql(w.ctx, bob, `{ item(id: "${id}") { id } }`)
    expect(foreign.body.data.item).toBeNull()
    expect(foreign.body.errors[0].extensions.code).toBe('NOT_FOUND')
    expect(
      (await gql(w.ctx, bob, '{ items { edges { node { id } } } }')).body.data.items.edges,
    ).toEqual([])
  })

  test('no credentials: 401 with a challenge; bad arguments: BAD_USER_INPUT', async () => {
    const w = await world()
    const none = await gql(w.ctx, undefined, '{ items { edges { node { id } } } }')
    expect(none.status).toBe(401)
    expect(none.res.headers.get('www-authenticate')).toStartWith('Bearer')
    expect(none.body.errors[0].extensions.code).toBe('UNAUTHENTICATED')
    for (const q of [
      '{ items(first: 0) { edges { cursor } } }',
      '{ items(first: 201) { edges { cursor } } }',
      '{ items(after: "zz") { edges { cursor } } }',
    ]) {
      const res = await gql(w.ctx, w.a, q)
      expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT')
    }
  })

  test('token lifecycle through GraphQL', async () => {
    const w = await world()
    const created = await gql(
      w.ctx,
      w.session,
      'mutation { createAgentToken(input: { name: "gql", scopes: [READ_ITEMS], expiresInDays: "3" }) { token agentToken { id scopes tokenHint } } }',
    )
    const { token, agentToken: t } = created.body.data.createAgentToken
    expect(token).toStartWith('sat_')
    expect(t.scopes).toEqual(['READ_ITEMS'])
    expect(
      (await gql(w.ctx, token, '{ items(first: 1) { edges { cursor } } }')).body.errors,
    ).toBeUndefined()
    const revoked = await gql(w.ctx, w.session, `mutation { revokeAgentToken(id: "${t.id}") }`)
    expect(revoked.body.data.revokeAgentToken).toBe(true)
    expect((await gql(w.ctx, token, '{ items(first: 1) { edges { cursor } } }')).status).toBe(401)
  })

  test('createItem and the image link field', async () => {
    const w = await world()
    const made = await gql(
      w.ctx,
      w.session,
      'mutation { createItem(input: { type: MEDIA, title: "From GraphQL", tags: ["g"], requestedAction: SAVE }) { id type title tags sourceImageUrl } }',
    )
    expect(made.body.data.createItem).toMatchObject({
      type: 'MEDIA',
      title: 'From GraphQL',
      tags: ['g'],
      sourceImageUrl: null,
    })
    const byAgent = await gql(w.ctx, w.a, 'mutation { createItem(input: { type: MEDIA }) { id } }')
    expect(byAgent.body.errors[0].extensions.code).toBe('UNAUTHENTICATED')
  })

  test('abusive queries are refused with a GraphQL error, not a 500 or a hang', async () => {
    const w = await world()
    const deep = `{ items { edges { node { claimedBy { id } history { actor { id } } } } } ${'__typename '.repeat(1)}}`
    expect((await gql(w.ctx, w.a, deep)).body.errors).toBeUndefined()
    const aliases = `{ ${Array.from({ length: 50 }, (_, i) => `a${i}: items(first: 200) { edges { node { history { note } } } }`).join(' ')} }`
    const tooMany = await gql(w.ctx, w.a, aliases)
    expect(tooMany.status).toBeLessThan(500)
    expect(tooMany.body.errors[0].message).toBe(
      'Syntax Error: Aliases limit of 15 exceeded, found 50.',
    )
    const nested = '{ items { edges { node { ' + 'claimedBy { id } '.repeat(1) + '} } } }'
    expect((await gql(w.ctx, w.a, nested)).body.errors).toBeUndefined()
    const huge = `{ items { edges { node { ${'id '.repeat(5000)} } } } }`
    const tokens = await gql(w.ctx, w.a, huge)
    expect(tokens.status).toBeLessThan(500)
    expect(tokens.body.errors[0].message).toBe('Syntax Error: Token limit of 2000 exceeded.')
    const tooDeep = `{ items { edges { node { id ${'... on Item { id '.repeat(12)}${'}'.repeat(12)} } } } }`
    expect((await gql(w.ctx, w.a, tooDeep)).body.errors[0].message).toBe(
      'Syntax Error: Query depth limit of 10 exceeded, found 16.',
    )
    const garbage = await w.ctx.request('POST', '/graphql', {
      token: w.a,
      body: '{"query": 5}',
      headers: { 'content-type': 'application/json' },
    })
    expect(garbage.status).toBeLessThan(500)
  })

  test('GraphiQL is served to a browser without any CDN', async () => {
    const w = await world()
    const res = await w.ctx.request('GET', '/graphql', { headers: { accept: 'text/html' } })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('GraphiQL')
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//)
  })
})
