import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, createItem } from './helpers'
import { createGraphQL } from '../src/graphql/yoga'
import { graphqlHandler } from '../src/graphql/http'
import { createCallerResolver } from '../src/auth/caller'
import { createSessionVerifier } from '../src/auth/jwt'
import { createRateLimiter } from '../src/auth/rate-limit'

/**
 * /graphql serves plain JSON POSTs through Yoga's envelop directly (src/graphql/http.ts) and
 * everything else through yoga.fetch. A body carrying `extensions` always takes Yoga's path, so
 * sending each request both ways proves the lean path answers exactly as Yoga would.
 */
describe('GraphQL over HTTP: the lean path answers exactly like Yoga', () => {
  test('status, content type and body are identical for successes and errors', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session, undefined, 'a')
    const reader = await agentToken(ctx, session, ['read_items'], 'r')
    const other = await agentToken(ctx, session, undefined, 'b')
    const item = await createItem(ctx, session, { requested_action: 'workflow', tags: ['t'] })
    await ctx.request('PATCH', `/api/saved/items/${item.id}`, {
      token: other.token,
      body: { claim_action: 'claim' },
    })
    const cases: [string | undefined, Record<string, unknown>][] = [
      [
        agent.token,
        {
          query:
            '{ items(first: 2) { edges { cursor node { id title tags claimStatus claimedBy { name } } } pageInfo { hasNextPage } } }',
        },
      ],
      [
        agent.token,
        {
          query: 'query One($id: ID!) { item(id: $id) { id history { action } } }',
          variables: { id: item.id },
          operationName: 'One',
        },
      ],
      [agent.token, { query: '{ item(id: "itm_nope") { id } }' }],
      [
        agent.token,
        {
          query: `mutation { updateItem(id: "${item.id}", input: { claimAction: CLAIM }) { id } }`,
        },
      ],
      [
        reader.token,
        {
          query: `mutation { updateItem(id: "${item.id}", input: { resolutionNote: "x" }) { id } }`,
        },
      ],
      [agent.token, { query: '{ agentTokens { id } }' }],
      [agent.token, { query: '{ items(first: 0) { edges { cursor } } }' }],
      [agent.token, { query: '{ items { nope } }' }],
      [agent.token, { query: '{ items {' }],
      [agent.token, { query: 'query A { __typename } query B { __typename }' }],
      [agent.token, { query: 'query A { __typename }', operationName: 'B' }],
      [agent.token, { query: '{ __typename }', variables: 'x' }],
      [undefined, { query: '{ __typename }' }],
      ['sat_' + 'A'.repeat(43), { query: '{ __typename }' }],
    ]
    let lean = 0
    for (const [token, body] of cases) {
      const direct = await ctx.request('POST', '/graphql', { token, body })
      const viaYoga = await ctx.request('POST', '/graphql', {
        token,
        body: { ...body, extensions: {} },
      })
      const a = {
        status: direct.status,
        type: direct.headers.get('content-type'),
        challenge: direct.headers.get('www-authenticate'),
        body: await direct.json(),
      }
      const b = {
        status: viaYoga.status,
        type: viaYoga.headers.get('content-type'),
        challenge: viaYoga.headers.get('www-authenticate'),
        body: await viaYoga.json(),
      }
      expect({ body, answer: a }).toEqual({ body, answer: b })
      if (a.status === 200 && !('errors' in a.body)) lean++
    }
    expect(lean).toBeGreaterThanOrEqual(2)
  })

  test('plain JSON POSTs take the lean path; everything else reaches yoga.fetch', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const resolveCaller = createCallerResolver(
      ctx.db,
      createSessionVerifier(ctx.config.jwt),
      ctx.app.deps.clock,
    )
    const yoga = createGraphQL({
      deps: ctx.app.deps,
      resolveCaller,
      rateLimit: createRateLimiter(0),
    })
    // The real Yoga, with its fetch counted.
    let viaFetch = 0
    const realFetch = yoga.fetch.bind(yoga)
    const counted = Object.assign(Object.create(yoga), {
      fetch: (r: Request, context?: object) => (viaFetch++, realFetch(r, context ?? {})),
    })
    const handle = graphqlHandler(counted, {
      resolveCaller,
      maxBodyBytes: 1024 * 1024,
      bodyTimeoutMs: 10_000,
    })
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      handle(
        new Request('http://localhost/graphql', {
          method: 'POST',
          body: JSON.stringify(body),
          headers: {
            authorization: `Bearer ${session}`,
            'content-type': 'application/json',
            ...headers,
          },
        }),
      )
    const lean = await post({ query: '{ items { edges { cursor } } }' })
    expect(lean.status).toBe(200)
    expect(viaFetch).toBe(0)
    await post(
      { query: '{ items { edges { cursor } } }' },
      { accept: 'application/graphql-response+json' },
    )
    await post({ query: '{ items {' })
    await post({ query: '{ __typename }', extensions: {} })
    expect(viaFetch).toBe(3)
  })
})
