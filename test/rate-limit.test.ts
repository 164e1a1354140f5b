import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, expectEnvelope } from './helpers'
import { MemoryTokenBuckets } from '../src/auth/rate-limit'

describe('rate limiting per caller', () => {
  test('over the limit: 429 rate_limited with Retry-After and RateLimit headers; callers are separate', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '5' })
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session) // the session's first request
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 6; i++) {
      last = await ctx.request('GET', '/api/saved/items', { token: agent.token })
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(last!.headers.get('ratelimit-limit')).toBe('5')
    expect(last!.headers.get('ratelimit-remaining')).toBe('0')
    expectEnvelope(await last!.json(), 'rate_limited')
    // The same user's session has its own bucket.
    const own = await ctx.request('GET', '/api/saved/items', { token: session })
    expect(own.status).toBe(200)
    expect(own.headers.get('ratelimit-remaining')).toBe('3')
    // GraphQL counts against the same bucket.
    const gql = await ctx.request('POST', '/graphql', { token: agent.token, body: { query: '{ items { edges { cursor } } }' } })
    expect(gql.status).toBe(429)
  })

  test('RATE_LIMIT_PER_MINUTE=0 turns limiting off', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    for (let i = 0; i < 30; i++) expect((await ctx.request('GET', '/api/saved/items', { token: session })).status).toBe(200)
  })

  test('buckets refill continuously', () => {
    const buckets = new MemoryTokenBuckets(60)
    for (let i = 0; i < 60; i++) expect(buckets.take('k', 1000).allowed).toBe(true)
    expect(buckets.take('k', 1000).allowed).toBe(false)
    expect(buckets.take('k', 2000).allowed).toBe(true)
    expect(buckets.take('k', 2000).allowed).toBe(false)
  })
})
