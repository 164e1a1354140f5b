import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { setup, sessionToken, agentToken, createItem, type TestContext } from './helpers'

/**
 * Property tests over REST and GraphQL inputs: whatever arrives — random query strings, bodies,
 * headers, ids, cursors, content types, invalid UTF-8, oversized payloads — the answer is a 2xx
 * or a 4xx in the error envelope, never a 5xx, and no stored item changes.
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 300)

async function world() {
  const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
  const alice = await sessionToken('alice')
  const bob = await sessionToken('bob')
  const agent = await agentToken(ctx, alice)
  const items = []
  for (let i = 0; i < 3; i++)
    items.push(await createItem(ctx, alice, { requested_action: 'workflow', tags: ['a', 'b'] }))
  await ctx.request('PATCH', `/api/saved/items/${items[0].id}`, {
    token: agent.token,
    body: { claim_action: 'claim' },
  })
  return {
    ctx,
    tokens: [alice, bob, agent.token, 'sat_bogus', 'x.y.z', ''],
    ids: items.map((i: any) => i.id as string),
  }
}

const snapshot = async (ctx: TestContext) => ({
  items: (await ctx.db.$client.execute('SELECT * FROM items ORDER BY id')).rows.map((r) =>
    JSON.stringify(r),
  ),
  tags: (await ctx.db.$client.execute('SELECT * FROM item_tags ORDER BY item_id, tag')).rows.map(
    (r) => JSON.stringify(r),
  ),
  tokens: (
    await ctx.db.$client.execute('SELECT id, revoked_at FROM agent_tokens ORDER BY id')
  ).rows.map((r) => JSON.stringify(r)),
  webhooks: (await ctx.db.$client.execute('SELECT id FROM webhooks ORDER BY id')).rows.map((r) =>
    JSON.stringify(r),
  ),
  changes: Number(
    (await ctx.db.$client.execute('SELECT count(*) AS n FROM item_events')).rows[0]?.n,
  ),
})

async function expectSafe(res: Response) {
  expect(res.status).toBeLessThan(500)
  if (res.status >= 400) {
    const text = await res.text()
    const body = JSON.parse(text)
    // REST answers the envelope; GraphQL answers { errors: [...] }; MCP's protocol errors are
    // JSON-RPC errors (numeric codes).
    if (body.jsonrpc === '2.0') expect(typeof body.error.code).toBe('number')
    else if (!('errors' in body)) {
      expect(typeof body.error.code).toBe('string')
      expect(typeof body.error.message).toBe('string')
    }
  } else await res.arrayBuffer()
}

const queryValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    '0',
    '-1',
    '201',
    '1.5',
    '1e3',
    'NaN',
    'json',
    'md',
    'event',
    'pending',
    'mine',
    '%00',
    '%ZZ',
    ',,,',
    'a,b',
  ),
  fc.integer({ min: -10, max: 1000 }).map(String),
)
const queryKey = fc.constantFrom(
  'format',
  'type',
  'status',
  'tag',
  'tags',
  'cursor',
  'limit',
  'workflow_status',
  'requested_action',
  'claim_status',
  'destination_kind',
  'destination_name',
  'after',
  'inbox',
  'x',
  '__proto__',
  'constructor',
)
const queryString = fc
  .array(fc.tuple(queryKey, queryValue), { maxLength: 6 })
  .map((pairs) =>
    pairs.map(([k, v]) => `${k}=${/%/.test(v) ? v : encodeURIComponent(v)}`).join('&'),
  )
const anyJson = fc.jsonValue({ maxDepth: 3 })
const patchish = fc.record(
  {
    workflow_status: fc.oneof(fc.constantFrom('pending', 'done', 'DONE', ''), anyJson),
    claim_action: fc.oneof(fc.constantFrom('claim', 'release', 'steal'), anyJson),
    lease_seconds: fc.oneof(fc.integer({ min: -5, max: 100_000 }), anyJson),
    resolution_note: fc.oneof(fc.string({ maxLength: 50 }), anyJson),
    corrections: fc.oneof(
      fc.record({ title: anyJson, tags: anyJson }, { requiredKeys: [] }),
      anyJson,
    ),
  },
  { requiredKeys: [] },
)
const contentType = fc.constantFrom(
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/json; charset=latin1',
  '',
  'application/vnd.api+json',
)
const bodyBytes = fc.oneof(
  anyJson.map((v) => new TextEncoder().encode(JSON.stringify(v))),
  patchish.map((v) => new TextEncoder().encode(JSON.stringify(v))),
  fc.uint8Array({ maxLength: 200 }),
  fc.constant(new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])),
)

describe('property: hostile input never breaks the service or its data', () => {
  test('random GETs with random query strings, ids and credentials', async () => {
    const w = await world()
    const before = await snapshot(w.ctx)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          '/api/saved/items',
          '/api/saved/inbox',
          '/api/saved/items/ID',
          '/api/saved/items/ID/history',
          '/api/saved/agent-tokens',
          '/api/saved/changes',
          '/api/saved/webhooks',
          '/api/saved/webhooks/ID/deliveries',
        ),
        fc.oneof(
          fc.constantFrom(...w.ids),
          fc.string({ maxLength: 120 }).map(encodeURIComponent),
          fc.constant('%2e%2e'),
        ),
        queryString,
        fc.constantFrom(...w.tokens),
        async (path, id, query, token) => {
          const res = await w.ctx.request('GET', `${path.replace('ID', id)}?${query}`, {
            token: token || undefined,
          })
          await expectSafe(res)
        },
      ),
      { numRuns: RUNS },
    )
    expect(await snapshot(w.ctx)).toEqual(before)
  })

  test('random PATCH and POST bodies, content types and headers; invalid ones change nothing', async () => {
    const w = await world()
    const before = await snapshot(w.ctx)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'PATCH /api/saved/items/ID',
          'POST /api/saved/items',
          'POST /api/saved/agent-tokens',
          'DELETE /api/saved/agent-tokens/ID',
          'PUT /api/saved/items/ID',
          'POST /api/saved/inbox/claim',
          'POST /api/saved/webhooks',
          'DELETE /api/saved/webhooks/ID',
          'POST /mcp',
        ),
        fc.oneof(fc.constantFrom(...w.ids), fc.string({ maxLength: 40 }).map(encodeURIComponent)),
        bodyBytes,
        contentType,
        fc.constantFrom(...w.tokens),
        fc.dictionary(
          fc.constantFrom('x-request-id', 'accept', 'content-length', 'x-forwarded-for', 'origin'),
          fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
          { maxKeys: 2 },
        ),
        async (route, id, bytes, type, token, headers) => {
          const [method, path] = route.split(' ') as [string, string]
          // An unknown property makes every body invalid, so nothing may change.
          let body: Uint8Array = bytes
          let invalidated = false
          try {
            const parsed = JSON.parse(new TextDecoder().decode(bytes))
            if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
              body = new TextEncoder().encode(JSON.stringify({ ...parsed, not_a_field: 1 }))
              invalidated = true
            }
          } catch {}
          // Claim next takes an empty body (every property is optional): make it invalid too.
          if (route === 'POST /api/saved/inbox/claim' && !invalidated && bytes.byteLength === 0)
            body = new TextEncoder().encode('{"not_a_field":1}')
          const { 'content-length': _ignored, ...safeHeaders } = headers
          const res = await w.ctx.app.handle(
            new Request(`http://localhost${path.replace('ID', id)}`, {
              method,
              body: body as Uint8Array<ArrayBuffer>,
              headers: {
                ...safeHeaders,
                ...(type ? { 'content-type': type } : {}),
                ...(token ? { authorization: `Bearer ${token}` } : {}),
              },
            }),
          )
          await expectSafe(res)
        },
      ),
      { numRuns: RUNS },
    )
    expect(await snapshot(w.ctx)).toEqual(before)
  })

  test('random GraphQL documents and variables', async () => {
    const w = await world()
    const before = await snapshot(w.ctx)
    const fragment = fc.constantFrom(
      '{ items(first: $n) { edges { cursor node { id title claimStatus history { action } } } } }',
      'query($n: Int, $c: String) { inbox(first: $n, after: $c, claimStatus: MINE) { edges { node { id } } } }',
      'query($id: ID!) { item(id: $id) { id sourceImageUrl } }',
      'mutation($id: ID!, $n: Int) { updateItem(id: $id, input: { leaseSeconds: $n }) { id } }',
      '{ agentTokens { id tokenHint } }',
      '{ __schema { types { name } } }',
      '{',
      'query { items { edges { node { id ...F } } } } fragment F on Item { ...F }',
    )
    await fc.assert(
      fc.asyncProperty(
        fragment,
        fc.oneof(fc.integer({ min: -5, max: 500 }), anyJson),
        anyJson,
        fc.constantFrom(...w.tokens),
        async (query, n, c, token) => {
          const res = await w.ctx.request('POST', '/graphql', {
            token: token || undefined,
            body: { query, variables: { n, c, id: typeof c === 'string' ? c : w.ids[0] } },
          })
          await expectSafe(res)
        },
      ),
      { numRuns: RUNS },
    )
    expect(await snapshot(w.ctx)).toEqual(before)
  })

  test('random /graphql POSTs: any content type, any bytes, batches of aliased mutations; only JSON reaches GraphQL', async () => {
    const w = await world()
    const before = await snapshot(w.ctx)
    const document = fc.oneof(
      fc
        .integer({ min: 1, max: 20 })
        .map(
          (n) =>
            `mutation { ${Array.from({ length: n }, (_, i) => `m${i}: updateItem(id: "itm_x${i}", input: { claimAction: CLAIM }) { id }`).join(' ')} }`,
        ),
      fc.constantFrom(
        'subscription { __typename }',
        'mutation { __typename }',
        '{ __typename }',
        'mutation M { ...F } fragment F on Mutation { ...F }',
      ),
      fc.string({ maxLength: 60 }),
    )
    await fc.assert(
      fc.asyncProperty(
        document,
        fc.constantFrom(
          'application/json',
          'application/graphql',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          '',
          'application/graphql-response+json',
        ),
        fc.boolean(),
        fc.constantFrom(...w.tokens),
        async (query, type, raw, token) => {
          const body = raw ? query : JSON.stringify({ query })
          const res = await w.ctx.app.handle(
            new Request('http://localhost/graphql', {
              method: 'POST',
              body,
              headers: {
                ...(type ? { 'content-type': type } : {}),
                ...(token ? { authorization: `Bearer ${token}` } : {}),
              },
            }),
          )
          if (type !== 'application/json' && res.status !== 401) expect(res.status).toBe(415)
          await expectSafe(res)
        },
      ),
      { numRuns: RUNS },
    )
    expect(await snapshot(w.ctx)).toEqual(before)
  })

  test('short or odd hosts with junk path prefixes never reach a route', async () => {
    const w = await world()
    const before = await snapshot(w.ctx)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('a', 'ab', 'abc', 'x.y', '1', '[::1]', 'a:1', 'localhost'),
        // Dot segments are normalised away by the URL parser itself, so they are no junk.
        fc.stringMatching(/^[a-z0-9._~-]{1,8}$/).filter((junk) => !/^\.+$/.test(junk)),
        fc.constantFrom('PATCH', 'DELETE', 'GET', 'POST'),
        fc.constantFrom('/api/saved/items/ID', '/api/saved/agent-tokens', '/health', '/graphql'),
        async (host, junk, method, path) => {
          const res = await w.ctx.app.handle(
            new Request(`http://${host}/${junk}${path.replace('ID', w.ids[0]!)}`, {
              method,
              headers: {
                authorization: `Bearer ${w.tokens[0]}`,
                'content-type': 'application/json',
              },
              body:
                method === 'GET'
                  ? undefined
                  : JSON.stringify({
                      workflow_status: 'done',
                      name: 'n',
                      scopes: ['read_items'],
                      query: '{ __typename }',
                    }),
            }),
          )
          expect(res.status).toBe(404)
          await expectSafe(res)
        },
      ),
      { numRuns: RUNS },
    )
    expect(await snapshot(w.ctx)).toEqual(before)
  })

  test('oversized payloads are 413 and change nothing', async () => {
    const w = await world()
    const before = await snapshot(w.ctx)
    const huge = new Uint8Array(2 * 1024 * 1024).fill(0x20)
    for (const path of [
      `/api/saved/items/${w.ids[1]}`,
      '/api/saved/items',
      '/api/saved/agent-tokens',
    ]) {
      const res = await w.ctx.app.handle(
        new Request(`http://localhost${path}`, {
          method: path.endsWith('tokens') || path.endsWith('items') ? 'POST' : 'PATCH',
          body: huge,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${w.tokens[0]}` },
        }),
      )
      expect(res.status).toBe(413)
    }
    expect(await snapshot(w.ctx)).toEqual(before)
  })
})
