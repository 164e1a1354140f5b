import { describe, expect, test } from 'bun:test'
import { agentToken, createItem, sessionToken, setup, type TestContext } from './helpers'

// A page of `items` or `inbox` with plain item fields is assembled from the GraphQL values the
// database stores (src/graphql/list-fast-path.ts). The same query with a no-op directive on its
// root field is declined by that path and answered by the executor: both answers must be the
// same bytes, for every caller, every claim state and every way of writing the selection.

const QUERIES: { query: string; variables?: Record<string, unknown> }[] = [
  // bench/run.ts's query
  {
    query:
      '{ items(first: 50) %D { edges { cursor node { id type status workflowStatus title summary actionNote resolutionNote tags requestedAction destinationKind destinationName claimStatus leaseExpiresAt createdAt updatedAt } } pageInfo { hasNextPage endCursor } } }',
  },
  // every field, in schema order, with every __typename
  {
    query:
      '{ items %D { __typename edges { __typename cursor node { __typename id type status workflowStatus title summary actionNote resolutionNote tags requestedAction destinationKind destinationName claimStatus claimedBy { __typename kind id name } leaseExpiresAt leaseId attempts availableAt createdAt updatedAt } } pageInfo { __typename hasNextPage hasPreviousPage startCursor endCursor } } }',
  },
  // aliases, another order, the claimant partly, edges and node twice
  {
    query:
      '{ list: items(first: 3) %D { pi: pageInfo { end: endCursor hasNextPage start: startCursor hasPreviousPage } e: edges { n: node { u: updatedAt i: id by: claimedBy { n: name k: kind } s: claimStatus leaseId } c: cursor again: node { attempts availableAt } } more: edges { cursor } } }',
  },
  // variables, arguments with defaults left out, a second page
  {
    query:
      'query Page($n: Int, $after: String, $tags: [String!]) { items(first: $n, after: $after, tags: $tags) %D { edges { node { id tags title } } pageInfo { hasNextPage hasPreviousPage endCursor } } }',
    variables: { n: 2, after: 'SECOND_PAGE' },
  },
  {
    query:
      'query ($t: ItemType) { items(type: $t, tag: "ü") %D { edges { node { id type tags } } } }',
    variables: { t: 'EVENT' },
  },
  // the inbox with each claim filter
  ...['ALL', 'MINE', 'CLAIMED', 'AVAILABLE', 'CLAIMABLE', 'STUCK'].map((claimStatus) => ({
    query: `{ inbox(first: 20, claimStatus: ${claimStatus}) %D { edges { cursor node { id claimStatus claimedBy { kind id name } leaseId leaseExpiresAt attempts availableAt workflowStatus requestedAction } } pageInfo { hasNextPage startCursor endCursor } } }`,
  })),
  {
    query:
      '{ inbox(workflowStatus: PENDING, requestedAction: WORKFLOW, destinationKind: "list") %D { edges { node { id destinationName } } } }',
  },
  // an empty page
  {
    query:
      '{ items(tags: ["nothing"]) %D { edges { cursor node { id } } pageInfo { hasNextPage startCursor endCursor } } }',
  },
]

async function seed(ctx: TestContext) {
  const session = await sessionToken('alice')
  const a = await agentToken(ctx, session, undefined, 'agent "a" ✓')
  const b = await agentToken(ctx, session, undefined, 'b')
  const tricky = 'Quote " backslash \\ tab \t newline \n emoji 🎉 bidi \u202e \u2028 \u00e9'
  const patch = (token: string, id: string, body: unknown) =>
    ctx.json('PATCH', `/api/saved/items/${id}`, { token, body })
  const ids: string[] = []
  const add = async (fields: Record<string, unknown>) =>
    ids.push((await createItem(ctx, session, fields)).id)
  await add({
    title: tricky,
    summary: 'x'.repeat(500),
    tags: ['ü', 'a"b'],
    requested_action: 'workflow',
    destination_kind: 'list',
    destination_name: tricky,
  })
  await add({
    type: 'media',
    title: null,
    requested_action: 'calendar',
    action_note: 'call\r\nback',
    tags: ['ü'],
  })
  await add({
    type: 'reference',
    requested_action: 'workflow',
    destination_kind: 'list',
    destination_name: 'Reading',
  })
  await add({ requested_action: 'reminder' })
  await add({ requested_action: 'save', tags: ['ü'] })
  await add({ type: 'media', status: 'failed' })
  await add({ requested_action: 'workflow' })
  const [held, mine, delayed, done, expired, , stuck] = ids as [string, ...string[]]
  await patch(a.token, held, { claim_action: 'claim', lease_seconds: 300 })
  await patch(session, mine!, { claim_action: 'claim', lease_seconds: 300 })
  await patch(b.token, delayed!, { claim_action: 'claim' })
  await patch(b.token, delayed!, { claim_action: 'release', retry_after_seconds: 90 })
  await patch(a.token, done!, { claim_action: 'claim' })
  await patch(a.token, done!, { workflow_status: 'done', resolution_note: tricky })
  await patch(b.token, expired!, { claim_action: 'claim', lease_seconds: 5 })
  for (let i = 0; i < 3; i++) {
    await patch(a.token, stuck!, { claim_action: 'claim' })
    await patch(a.token, stuck!, { claim_action: 'release' })
  }
  ctx.clock.advance(10_000)
  return { callers: [session, a.token, b.token] }
}

describe('GraphQL lists assembled from stored values', () => {
  test('answer byte for byte what the executor answers, for every caller and selection', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0', MAX_CLAIM_ATTEMPTS: '3' })
    const { callers } = await seed(ctx)
    const sent: string[] = []
    const rows = ctx.db.$rows
    ctx.db.$rows = (sql, args) => (sent.push(sql), rows(sql, args))
    const run = async (token: string, query: string, variables?: Record<string, unknown>) => {
      sent.length = 0
      const res = await ctx.request('POST', '/graphql', { token, body: { query, variables } })
      const fromValues = sent.some((sql) => sql.includes('substr(gql,'))
      return {
        status: res.status,
        type: res.headers.get('content-type'),
        text: await res.text(),
        fromValues,
      }
    }
    const secondPage = JSON.parse(
      (await run(callers[0]!, '{ items(first: 2) { pageInfo { endCursor } } }')).text,
    ).data.items.pageInfo.endCursor
    for (const token of callers) {
      for (const { query, variables } of QUERIES) {
        const v = variables && { ...variables, after: variables.after && secondPage }
        const fast = await run(token, query.replace('%D', ''), v)
        const executed = await run(token, query.replace('%D', '@include(if: true)'), v)
        expect(fast.fromValues).toBe(true)
        expect(executed.fromValues).toBe(false)
        expect(fast.status).toBe(200)
        expect(JSON.parse(fast.text).errors).toBeUndefined()
        expect(fast.text).toBe(executed.text)
        expect(fast.type).toBe(executed.type)
      }
    }
    // The data above holds every state a page can show to agent a.
    const all = (await run(callers[1]!, QUERIES[1]!.query.replace('%D', ''))).text
    for (const shown of [
      '"claimStatus":"MINE"',
      '"claimStatus":"CLAIMED"',
      '"claimStatus":"AVAILABLE"',
      '"leaseId":"',
      '"claimedBy":{"__typename":"Claimant","kind":"USER"',
      '"name":"agent \\"a\\" ✓"',
      '"availableAt":"',
      '"workflowStatus":"DONE"',
      '"title":null',
    ])
      expect(all).toContain(shown)
  })

  test('declines what its values cannot answer, and errors, to the executor', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    await createItem(ctx, session, { tags: ['x'] })
    const sent: string[] = []
    const rows = ctx.db.$rows
    ctx.db.$rows = (sql, args) => (sent.push(sql), rows(sql, args))
    for (const query of [
      '{ items { edges { node { id sourceImageUrl } } } }',
      '{ items { edges { node { id history { action } } } } }',
      '{ items { edges { node { ...F } } } } fragment F on Item { id }',
      '{ items { edges { node { id title @skip(if: false) } } } }',
      '{ items { edges { node { id } } } inbox { edges { node { id } } } }',
      '{ a: items { edges { node { id } } } b: items { edges { node { id } } } }',
    ]) {
      sent.length = 0
      const res = await ctx.json('POST', '/graphql', { token: session, body: { query } })
      expect(res.status).toBe(200)
      expect(res.body.errors).toBeUndefined()
      expect(sent.some((sql) => sql.includes('substr(gql,'))).toBe(false)
    }
    // Refusals are the executor's, with the field's path: a bad cursor, a bad page size.
    for (const [query, code] of [
      ['{ items(after: "nope") { edges { cursor } } }', 'BAD_USER_INPUT'],
      ['{ items(first: 500) { edges { cursor } } }', 'BAD_USER_INPUT'],
    ] as const) {
      const res = await ctx.json('POST', '/graphql', { token: session, body: { query } })
      expect(res.body.errors?.[0]?.extensions?.code).toBe(code)
      expect(res.body.errors?.[0]?.path).toEqual(['items'])
    }
    // A write-only token may not read: the executor's FORBIDDEN on the field, as before.
    const writer = await agentToken(ctx, session, ['update_workflow_status'])
    const refused = await ctx.json('POST', '/graphql', {
      token: writer.token,
      body: { query: '{ items { edges { cursor } } }' },
    })
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN')
  })
})
