import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, expectEnvelope, JWT_SECRET } from './helpers'
import { MemoryTokenBuckets } from '../src/auth/rate-limit'
import { loadConfig } from '../src/config'
import { openDatabase } from '../src/db/client'
import { createApp } from '../src/app'
import { createLogger } from '../src/logger'

async function openSecondApp(dir: string, env: Record<string, string>) {
  const config = loadConfig({
    JWT_SECRET,
    DATA_DIR: dir,
    DATABASE_URL: `file:${dir}/test.db`,
    LOG_LEVEL: 'silent',
    ...env,
  })
  const db = await openDatabase(config.database)
  const app = createApp({ config, db, logger: createLogger('silent') })
  return {
    request: (method: string, path: string, o: { token: string }) =>
      app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { authorization: `Bearer ${o.token}` },
        }),
      ),
  }
}

describe('rate limiting per caller', () => {
  test('over the limit: 429 rate_limited with Retry-After and RateLimit headers; GraphQL draws from the same bucket', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '5' })
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session) // the user's first draw
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 5; i++) {
      last = await ctx.request('GET', '/api/saved/items', { token: agent.token })
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(last!.headers.get('ratelimit-limit')).toBe('5')
    expect(last!.headers.get('ratelimit-remaining')).toBe('0')
    expectEnvelope(await last!.json(), 'rate_limited')
    const gql = await ctx.request('POST', '/graphql', {
      token: agent.token,
      body: { query: '{ items { edges { cursor } } }' },
    })
    expect(gql.status).toBe(429)
    // Another user has a bucket of their own.
    expect(
      (await ctx.request('GET', '/api/saved/items', { token: await sessionToken('bob') })).status,
    ).toBe(200)
  })

  test('with RATE_LIMIT_STORE=database, processes sharing the database share one bucket per user, also under concurrency', async () => {
    const first = await setup({ RATE_LIMIT_PER_MINUTE: '10', RATE_LIMIT_STORE: 'database' })
    // A second app on the same file stands for a second worker process.
    const second = await openSecondApp(first.dir, {
      RATE_LIMIT_PER_MINUTE: '10',
      RATE_LIMIT_STORE: 'database',
    })
    const session = await sessionToken('alice')
    const agent = await agentToken(first, session) // one draw
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        (i % 2 ? first : second).request('GET', '/api/saved/items', { token: agent.token }),
      ),
    )
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(9)
    expect(statuses.filter((s) => s === 429)).toHaveLength(7)
    const refused = results.find((r) => r.status === 429)!
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(loadConfig({ JWT_SECRET, DATA_DIR: first.dir, WORKERS: '2' }).rateLimitStore).toBe(
      'database',
    )
    expect(loadConfig({ JWT_SECRET, DATA_DIR: first.dir }).rateLimitStore).toBe('memory')
  })

  test('RATE_LIMIT_PER_MINUTE=0 turns limiting off (not a fallback to the default 600)', async () => {
    expect(
      loadConfig({ JWT_SECRET, DATABASE_URL: ':memory:', RATE_LIMIT_PER_MINUTE: '0' })
        .rateLimitPerMinute,
    ).toBe(0)
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    // More than the default bucket holds, and no RateLimit headers at all.
    const statuses = await Promise.all(
      Array.from({ length: 650 }, () =>
        ctx.request('GET', '/api/saved/items?limit=1', { token: session }),
      ),
    )
    expect(statuses.filter((r) => r.status !== 200)).toEqual([])
    expect(statuses[0]?.headers.get('ratelimit-limit')).toBeNull()
  })

  test('buckets refill continuously', () => {
    const buckets = new MemoryTokenBuckets(60)
    for (let i = 0; i < 60; i++) expect(buckets.take('k', 1000).allowed).toBe(true)
    expect(buckets.take('k', 1000).allowed).toBe(false)
    expect(buckets.take('k', 2000).allowed).toBe(true)
    expect(buckets.take('k', 2000).allowed).toBe(false)
  })
})
