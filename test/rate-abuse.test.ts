import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setup, sessionToken, agentToken, expectEnvelope, JWT_SECRET } from './helpers'
import { loadConfig, ConfigError } from '../src/config'
import { startServer } from './server'
import { addressKey } from '../src/http/auth'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const BAD_AGENT_TOKEN = 'sat_' + 'A'.repeat(43)
const aliased = (n: number) =>
  `mutation { ${Array.from({ length: n }, (_, i) => `m${i}: createItem(input: { type: EVENT, title: "x${i}" }) { id }`).join(' ')} }`

describe('rate limits per user (issue 15 row 3)', () => {
  test("every agent token of a user and the user's sessions draw from one bucket; minting more tokens adds nothing", async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '10' })
    const session = await sessionToken('alice')
    const tokens = [
      await agentToken(ctx, session, undefined, 'a'),
      await agentToken(ctx, session, undefined, 'b'),
      await agentToken(ctx, session, undefined, 'c'),
    ]
    // 3 draws spent on minting; 20 requests across the three tokens and two sessions.
    const callers = [
      ...tokens.map((t) => t.token),
      session,
      await sessionToken('alice', { expiresIn: '2h' }),
    ]
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ctx.request('GET', '/api/saved/items', { token: callers[i % callers.length] }),
      ),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(7)
    expect(results.filter((r) => r.status === 429)).toHaveLength(13)
    // A fresh token is no fresh bucket: minting is refused, and so is every other token.
    const mint = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: { name: 'd', scopes: ['read_items'] },
    })
    expect(mint.status).toBe(429)
    expect((await ctx.request('GET', '/api/saved/inbox', { token: tokens[2]!.token })).status).toBe(
      429,
    )
    // Another user is unaffected.
    expect(
      (await ctx.request('GET', '/api/saved/items', { token: await sessionToken('bob') })).status,
    ).toBe(200)
  })
})

describe('one draw per GraphQL mutation root field (issue 15 row 2)', () => {
  for (const path of ['lean', 'yoga'] as const) {
    test(`aliased createItem ×15 draws 15; over budget the whole request is 429 and nothing is applied (${path} path)`, async () => {
      const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '20' })
      const session = await sessionToken('alice')
      // `extensions` sends the request through yoga.fetch instead of the lean path.
      const body = (query: string) => (path === 'yoga' ? { query, extensions: {} } : { query })
      const first = await ctx.json('POST', '/graphql', { token: session, body: body(aliased(15)) })
      expect(first.status).toBe(200)
      expect(Object.keys(first.body.data)).toHaveLength(15)
      const second = await ctx.json('POST', '/graphql', { token: session, body: body(aliased(15)) })
      expect(second.status).toBe(429)
      expect(second.body.errors[0].extensions.code).toBe('RATE_LIMITED')
      expect(second.body.data ?? null).toBeNull()
      expect(Number(second.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      // 5 left: the list costs one, and holds exactly the 15 of the first request.
      const list = await ctx.json('GET', '/api/saved/items?limit=200', { token: session })
      expect(list.status).toBe(200)
      expect(list.body.items).toHaveLength(15)
      expect(list.res.headers.get('ratelimit-remaining')).toBe('4')
    })
  }

  test('fragments count their fields; a query with many aliases draws one', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '20' })
    const session = await sessionToken('alice')
    const viaFragment = `mutation { ...Two } fragment Two on Mutation { a: createItem(input: { type: EVENT, title: "a" }) { id } ... on Mutation { b: createItem(input: { type: EVENT, title: "b" }) { id } } }`
    expect(
      (await ctx.json('POST', '/graphql', { token: session, body: { query: viaFragment } })).status,
    ).toBe(200)
    const reads = `{ ${Array.from({ length: 10 }, (_, i) => `r${i}: items(first: 1) { edges { cursor } }`).join(' ')} }`
    expect(
      (await ctx.json('POST', '/graphql', { token: session, body: { query: reads } })).status,
    ).toBe(200)
    const list = await ctx.json('GET', '/api/saved/items', { token: session })
    expect(list.body.items).toHaveLength(2)
    // 20 − 2 (fragment mutation) − 1 (query) − 1 (this list)
    expect(list.res.headers.get('ratelimit-remaining')).toBe('16')
  })
})

describe('failed authentication, limited per client address (issue 15 row 11)', () => {
  test('after AUTH_FAILURES_PER_MINUTE failures the address gets 429 with Retry-After, before any credential is checked', async () => {
    const ctx = await setup({ AUTH_FAILURES_PER_MINUTE: '3' })
    const session = await sessionToken('alice')
    // A missing header guesses nothing and is not counted.
    for (let i = 0; i < 5; i++)
      expect((await ctx.request('GET', '/api/saved/items')).status).toBe(401)
    for (let i = 0; i < 2; i++)
      expect(
        (await ctx.request('GET', '/api/saved/items', { token: BAD_AGENT_TOKEN })).status,
      ).toBe(401)
    // GraphQL failures count once per request (not once per internal attempt).
    expect(
      (
        await ctx.request('POST', '/graphql', {
          token: 'not.a.jwt',
          body: { query: '{ __typename }' },
        })
      ).status,
    ).toBe(401)
    const blocked = await ctx.json('GET', '/api/saved/items', { token: BAD_AGENT_TOKEN })
    expect(blocked.status).toBe(429)
    expectEnvelope(blocked.body, 'rate_limited')
    expect(Number(blocked.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // Refused before verification: even a valid credential from this address waits.
    expect((await ctx.request('GET', '/api/saved/items', { token: session })).status).toBe(429)
    const gql = await ctx.json('POST', '/graphql', {
      token: session,
      body: { query: '{ __typename }' },
    })
    expect(gql.status).toBe(429)
    expect(gql.body.errors[0].extensions.code).toBe('RATE_LIMITED')
  })

  test('RATE_LIMIT_PER_MINUTE=0 turns it off, as does AUTH_FAILURES_PER_MINUTE=0', async () => {
    for (const env of [{ RATE_LIMIT_PER_MINUTE: '0' }, { AUTH_FAILURES_PER_MINUTE: '0' }] as Record<
      string,
      string
    >[]) {
      const ctx = await setup(env)
      for (let i = 0; i < 70; i++)
        expect(
          (await ctx.request('GET', '/api/saved/items', { token: BAD_AGENT_TOKEN })).status,
        ).toBe(401)
    }
  })

  test('a real server keys the limit on the peer address: one address blocked, another not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-authrl-'))
    dirs.push(dir)
    const { proc, port } = await startServer({
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/a.db`,
      JWT_SECRET,
      RATE_LIMIT_PER_MINUTE: '600',
      AUTH_FAILURES_PER_MINUTE: '2',
    })
    procs.push(proc)
    const get = (from: string) =>
      new Promise<number>((resolve, reject) => {
        let data = ''
        const socket = connect({ host: '127.0.0.1', port, localAddress: from }, () =>
          socket.write(
            `GET /api/saved/items HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${BAD_AGENT_TOKEN}\r\nConnection: close\r\n\r\n`,
          ),
        )
        socket.on('data', (d) => (data += d))
        socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1])))
        socket.on('error', reject)
      })
    expect([await get('127.0.0.2'), await get('127.0.0.2'), await get('127.0.0.2')]).toEqual([
      401, 401, 429,
    ])
    expect(await get('127.0.0.3')).toBe(401)
  })

  test('RATE_LIMIT_STORE=memory with WORKERS>1 is refused at start, naming the variable', () => {
    let error: unknown
    try {
      loadConfig({ JWT_SECRET, DATA_DIR: tmpdir(), WORKERS: '2', RATE_LIMIT_STORE: 'memory' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('RATE_LIMIT_STORE')
  })
})

describe('client address keys', () => {
  test('IPv6 addresses are keyed by their /64, IPv4 and IPv4-mapped addresses as they are', () => {
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:db8:1:2::99')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:DB8::1')).toBe('2001:db8:0:0::/64')
    expect(addressKey('::1')).toBe('0:0:0:0::/64')
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(addressKey('::ffff:10.0.0.7')).toBe('10.0.0.7')
    expect(addressKey('192.168.1.20')).toBe('192.168.1.20')
  })

  test('with RATE_LIMIT_STORE=database, failures counted by one worker block the address on another after its first failure there', async () => {
    const first = await setup({ AUTH_FAILURES_PER_MINUTE: '3', RATE_LIMIT_STORE: 'database' })
    const second = await setup({
      AUTH_FAILURES_PER_MINUTE: '3',
      RATE_LIMIT_STORE: 'database',
      DATABASE_URL: `file:${first.dir}/test.db`,
    })
    const bad = { token: BAD_AGENT_TOKEN }
    for (let i = 0; i < 3; i++)
      expect((await first.request('GET', '/api/saved/items', bad)).status).toBe(401)
    expect((await first.request('GET', '/api/saved/items', bad)).status).toBe(429)
    // The second worker verifies once (and counts it), then refuses.
    expect((await second.request('GET', '/api/saved/items', bad)).status).toBe(401)
    expect((await second.request('GET', '/api/saved/items', bad)).status).toBe(429)
    expect(
      (await second.request('GET', '/api/saved/items', { token: await sessionToken('alice') }))
        .status,
    ).toBe(429)
  })
})
