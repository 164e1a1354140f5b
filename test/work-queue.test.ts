import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  agentToken,
  createItem,
  expectEnvelope,
  JWT_SECRET,
  seedInbox,
  sessionToken,
  setup,
  type TestContext,
} from './helpers'
import { startServer } from './server'

const claim = (ctx: TestContext, token: string, body: unknown = {}) =>
  ctx.json('POST', '/api/saved/inbox/claim', { token, body })
const patch = (
  ctx: TestContext,
  token: string,
  id: string,
  body: unknown,
  headers?: Record<string, string>,
) => ctx.json('PATCH', `/api/saved/items/${id}`, { token, body, headers })

/** A JSON request to a listening server (the two-process tests). */
const call = (base: string, method: string, path: string, token: string, body?: unknown) =>
  fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  }).then(async (r) => ({ status: r.status, body: await r.json() }))

/** Agents loop claim next → done until the queue is empty; returns every status seen and the ids done. */
async function drain(
  next: () => Promise<{ status: number; body: any }>,
  done: (id: string, lease: string) => Promise<{ status: number }>,
) {
  const statuses: number[] = []
  const finished: string[] = []
  for (;;) {
    const res = await next()
    statuses.push(res.status)
    if (res.status !== 200 || !res.body.item) return { statuses, finished }
    const d = await done(res.body.item.id, res.body.lease.id)
    statuses.push(d.status)
    if (d.status === 200) finished.push(res.body.item.id)
  }
}

function expectDrained(ids: string[], results: { statuses: number[]; finished: string[] }[]) {
  const all = results.flatMap((r) => r.finished)
  expect(all.length).toBe(ids.length)
  expect(new Set(all)).toEqual(new Set(ids))
  const statuses = results.flatMap((r) => r.statuses)
  expect(statuses.filter((s) => s !== 200)).toEqual([])
}

describe('claim next', () => {
  test('8 agents with 8 tokens, then 8 agents sharing one token, drain 2,000 items: each done once, no 409, no 5xx', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    for (const shared of [false, true]) {
      const ids = await seedInbox(ctx.db, 'alice', 1000)
      const one = await agentToken(ctx, session, undefined, 'shared')
      const tokens = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          shared ? one : agentToken(ctx, session, undefined, `agent-${i}`),
        ),
      )
      const results = await Promise.all(
        tokens.map((t) =>
          drain(
            () => claim(ctx, t.token, { lease_seconds: 60 }),
            (id, lease) => patch(ctx, t.token, id, { workflow_status: 'done', lease_id: lease }),
          ),
        ),
      )
      expectDrained(ids, results)
    }
    const history = await ctx.db.$query(
      `SELECT count(*) AS n FROM item_events WHERE action = 'done'`,
    )
    expect(Number(history[0]!.n)).toBe(2000)
  })

  test('agents spread over two server processes on one database file drain 400 items exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-wq-'))
    const env = { DATA_DIR: dir, DATABASE_URL: `file:${dir}/shared.db`, JWT_SECRET }
    const servers = [await startServer(env), await startServer(env)]
    try {
      const session = await sessionToken('alice')
      const tokens = await Promise.all(
        Array.from(
          { length: 4 },
          async (_, i) =>
            (
              await call(servers[0]!.base, 'POST', '/api/saved/agent-tokens', session, {
                name: `a${i}`,
                scopes: ['read_items', 'update_workflow_status'],
              })
            ).body.token as string,
        ),
      )
      const ids: string[] = []
      for (let i = 0; i < 400; i += 50) {
        const made = await Promise.all(
          Array.from({ length: 50 }, () =>
            call(servers[i % 2]!.base, 'POST', '/api/saved/items', session, {
              type: 'event',
              requested_action: 'workflow',
            }),
          ),
        )
        ids.push(...made.map((m) => m.body.id))
      }
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => {
          const base = servers[i % 2]!.base
          const token = tokens[i % 4]!
          return drain(
            () => call(base, 'POST', '/api/saved/inbox/claim', token),
            (id, lease) =>
              call(base, 'PATCH', `/api/saved/items/${id}`, token, {
                workflow_status: 'done',
                lease_id: lease,
              }),
          )
        }),
      )
      expectDrained(ids, results)
    } finally {
      for (const s of servers) s.proc.kill(9)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  test('filters, oldest first, done and delayed items passed over; empty answers null', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const media = await createItem(ctx, session, {
      type: 'media',
      requested_action: 'save',
      tags: ['film'],
    })
    const event = await createItem(ctx, session, {
      type: 'event',
      requested_action: 'calendar',
      tags: ['film', 'kids'],
    })
    await createItem(ctx, session, { type: 'event' }) // not in the inbox
    const got = await claim(ctx, agent.token, { type: 'event', tags: ['kids'], tag: 'film' })
    expect(got.status).toBe(200)
    expect(got.body.item.id).toBe(event.id)
    expect(got.body.lease).toEqual({
      id: got.body.item.lease_id,
      expires_at: got.body.item.lease_expires_at,
      attempt: 1,
    })
    expect(got.body.item.attempts).toBe(1)
    // Released with a delay: passed over until then.
    expect((await patch(ctx, agent.token, media.id, { claim_action: 'claim' })).status).toBe(200)
    const delayed = await patch(ctx, agent.token, media.id, {
      claim_action: 'release',
      retry_after_seconds: 30,
    })
    expect(delayed.body.available_at).not.toBeNull()
    expect((await claim(ctx, agent.token)).body).toEqual({ item: null, lease: null })
    ctx.clock.advance(31_000)
    expect((await claim(ctx, agent.token)).body.item.id).toBe(media.id)
    // Bad input: 400, nothing claimed.
    for (const body of [
      { lease_seconds: 0 },
      { wait_seconds: 61 },
      { lease_seconds: '60' },
      { color: 'red' },
      { type: 'movie' },
    ]) {
      const res = await claim(ctx, agent.token, body)
      expect({ body, status: res.status }).toEqual({ body, status: 400 })
      expectEnvelope(res.body, 'invalid_request')
    }
    const bad = await claim(ctx, agent.token, { lease_seconds: 0 })
    expect(bad.body.error.details.field).toBe('lease_seconds')
    expect(bad.body.error.message).toContain('lease_seconds')
  })

  test('scopes: both read_items and update_workflow_status are needed', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    await createItem(ctx, session, { requested_action: 'workflow' })
    for (const scopes of [['read_items'], ['update_workflow_status']]) {
      const agent = await agentToken(ctx, session, scopes)
      const res = await claim(ctx, agent.token)
      expect(res.status).toBe(403)
      expectEnvelope(res.body, 'insufficient_scope')
      expect(res.res.headers.get('www-authenticate')).toContain('insufficient_scope')
    }
  })

  test('a waiting claim wakes within 250 ms when another process creates an item, or a claim is released; else returns empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-wait-'))
    const env = { DATA_DIR: dir, DATABASE_URL: `file:${dir}/shared.db`, JWT_SECRET }
    const [a, b] = [await startServer(env), await startServer(env)]
    try {
      const session = await sessionToken('alice')
      const token = (
        await call(a.base, 'POST', '/api/saved/agent-tokens', session, {
          name: 'w',
          scopes: ['read_items', 'update_workflow_status'],
        })
      ).body.token

      const empty = Date.now()
      const none = await call(a.base, 'POST', '/api/saved/inbox/claim', token, { wait_seconds: 1 })
      expect(none.body).toEqual({ item: null, lease: null })
      expect(Date.now() - empty).toBeGreaterThanOrEqual(950)

      const waiting = call(a.base, 'POST', '/api/saved/inbox/claim', token, { wait_seconds: 10 })
      await Bun.sleep(300)
      const created = await call(b.base, 'POST', '/api/saved/items', session, {
        type: 'event',
        requested_action: 'workflow',
      })
      const at = Date.now()
      const woke = await waiting
      expect(Date.now() - at).toBeLessThan(250)
      expect(woke.body.item.id).toBe(created.body.id)

      const again = call(a.base, 'POST', '/api/saved/inbox/claim', token, { wait_seconds: 10 })
      await Bun.sleep(300)
      const released = await call(b.base, 'PATCH', `/api/saved/items/${created.body.id}`, token, {
        claim_action: 'release',
      })
      expect(released.status).toBe(200)
      const at2 = Date.now()
      expect((await again).body.item.id).toBe(created.body.id)
      expect(Date.now() - at2).toBeLessThan(250)
    } finally {
      a.proc.kill(9)
      b.proc.kill(9)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  test('waiting requests are bounded per caller: over the bound, 429', async () => {
    const ctx = await setup({ MAX_WAITING_CLAIMS_PER_CALLER: '2' })
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const waits = [
      claim(ctx, agent.token, { wait_seconds: 1 }),
      claim(ctx, agent.token, { wait_seconds: 1 }),
    ]
    await Bun.sleep(50)
    const third = await claim(ctx, agent.token, { wait_seconds: 1 })
    expect(third.status).toBe(429)
    expectEnvelope(third.body, 'rate_limited')
    expect(third.res.headers.get('retry-after')).toBe('1')
    for (const w of await Promise.all(waits)) expect(w.body).toEqual({ item: null, lease: null })
  })
})

test('waiting requests are bounded per process too: callers of different users share the bound', async () => {
  const ctx = await setup({ MAX_WAITING_CLAIMS: '1' })
  const alice = await agentToken(ctx, await sessionToken('alice'))
  const bob = await agentToken(ctx, await sessionToken('bob'))
  const first = claim(ctx, alice.token, { wait_seconds: 1 })
  await Bun.sleep(50)
  const second = await claim(ctx, bob.token, { wait_seconds: 1 })
  expect(second.status).toBe(429)
  expectEnvelope(second.body, 'rate_limited')
  expect((await first).body).toEqual({ item: null, lease: null })
  // Once the first wait is over, the place is free again.
  expect((await claim(ctx, bob.token, { wait_seconds: 1 })).status).toBe(200)
})

describe('leases, attempts and the owner override', () => {
  test("fencing: A's lease expires, B claims, A's PATCH with its old lease_id is 409 lease_lost and changes nothing", async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const [a, b] = [
      await agentToken(ctx, session, undefined, 'a'),
      await agentToken(ctx, session, undefined, 'b'),
    ]
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    const first = await claim(ctx, a.token, { lease_seconds: 5 })
    const renewed = await patch(ctx, a.token, item.id, {
      claim_action: 'claim',
      lease_id: first.body.lease.id,
    })
    expect(renewed.body.lease_id).toBe(first.body.lease.id) // a renewal keeps the lease and the attempt
    expect(renewed.body.attempts).toBe(1)
    ctx.clock.advance(301_000)
    const second = await claim(ctx, b.token)
    expect(second.body.item.id).toBe(item.id)
    expect(second.body.lease.attempt).toBe(2)
    expect(second.body.lease.id).not.toBe(first.body.lease.id)
    const before = await ctx.db.$query('SELECT * FROM items')
    for (const body of [
      { workflow_status: 'done' },
      { resolution_note: 'late' },
      { claim_action: 'release' },
    ]) {
      const late = await patch(ctx, a.token, item.id, { ...body, lease_id: first.body.lease.id })
      expect(late.status).toBe(409)
      expectEnvelope(late.body, 'lease_lost')
    }
    expect(await ctx.db.$query('SELECT * FROM items')).toEqual(before)
    // B sees its own lease id; A and the owner see none.
    expect(
      (await ctx.json('GET', `/api/saved/items/${item.id}`, { token: b.token })).body.lease_id,
    ).toBe(second.body.lease.id)
    expect(
      (await ctx.json('GET', `/api/saved/items/${item.id}`, { token: a.token })).body.lease_id,
    ).toBeNull()
  })

  test('attempts run out: the item is stuck, claim next passes it over; the owner revokes and it is claimable again', async () => {
    const ctx = await setup({ MAX_CLAIM_ATTEMPTS: '2' })
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    for (let i = 1; i <= 2; i++) {
      expect((await claim(ctx, agent.token, { lease_seconds: 1 })).body.lease.attempt).toBe(i)
      ctx.clock.advance(1100) // the agent crashed; its lease runs out
    }
    expect((await claim(ctx, agent.token)).body.item).toBeNull()
    const stuck = await ctx.json('GET', '/api/saved/inbox?claim_status=stuck', { token: session })
    expect(stuck.body.items.map((i: any) => i.id)).toEqual([item.id])
    expect(
      (await ctx.json('GET', '/api/saved/inbox?claim_status=claimable', { token: session })).body
        .items,
    ).toEqual([])
    expect((await patch(ctx, agent.token, item.id, { claim_action: 'revoke' })).status).toBe(403)
    const revoked = await patch(ctx, session, item.id, { claim_action: 'revoke' })
    expect(revoked.status).toBe(200)
    expect(revoked.body.attempts).toBe(0)
    expect(
      (
        await ctx.json('GET', '/api/saved/inbox?claim_status=claimable', { token: session })
      ).body.items.map((i: any) => i.id),
    ).toEqual([item.id])
    const history = await ctx.json('GET', `/api/saved/items/${item.id}/history`, { token: session })
    expect(history.body.events.map((e: any) => e.action)).toEqual(['claim', 'claim', 'revoke'])
  })

  test("the owner's revoke ends a live claim and lets the owner finish; the history names the former holder", async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session, undefined, 'slow')
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    await claim(ctx, agent.token, { lease_seconds: 86_400 })
    expect((await patch(ctx, session, item.id, { workflow_status: 'done' })).status).toBe(409)
    const res = await patch(ctx, session, item.id, {
      claim_action: 'revoke',
      workflow_status: 'done',
    })
    expect(res.status).toBe(200)
    expect(res.body.workflow_status).toBe('done')
    const events = (
      await ctx.json('GET', `/api/saved/items/${item.id}/history`, { token: session })
    ).body.events
    expect(events[1]).toMatchObject({
      action: 'revoke',
      from: agent.id,
      actor: { kind: 'user', id: 'alice' },
    })
  })

  test('revoking an agent token ends its claims at once', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const other = await agentToken(ctx, session, undefined, 'other')
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    await claim(ctx, agent.token, { lease_seconds: 86_400 })
    expect(
      (await ctx.request('DELETE', `/api/saved/agent-tokens/${agent.id}`, { token: session }))
        .status,
    ).toBe(204)
    const taken = await claim(ctx, other.token)
    expect(taken.body.item.id).toBe(item.id)
    const events = (
      await ctx.json('GET', `/api/saved/items/${item.id}/history`, { token: session })
    ).body.events
    expect(events.map((e: any) => [e.action, e.from])).toEqual([
      ['claim', 'available'],
      ['revoke', agent.id],
      ['claim', 'available'],
    ])
  })

  test('a lease never outlives its agent token', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const res = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: {
        name: 'short',
        scopes: ['read_items', 'update_workflow_status'],
        expires_in_days: '1',
      },
    })
    await createItem(ctx, session, { requested_action: 'workflow' })
    ctx.clock.advance(86_400_000 - 60_000) // a minute of the token's life left
    const got = await claim(ctx, res.body.token, { lease_seconds: 3600 })
    expect(Date.parse(got.body.lease.expires_at)).toBe(Date.parse(res.body.expires_at))
  })

  test('delete: session only, 204, then 404; tags, history and image gone; replay-safe with a key', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const item = await createItem(ctx, session, { requested_action: 'workflow', tags: ['x'] })
    await patch(ctx, session, item.id, { claim_action: 'claim' })
    expect(
      (await ctx.request('DELETE', `/api/saved/items/${item.id}`, { token: agent.token })).status,
    ).toBe(401)
    const del = await ctx.request('DELETE', `/api/saved/items/${item.id}`, {
      token: session,
      headers: { 'idempotency-key': 'del-1' },
    })
    expect(del.status).toBe(204)
    const replay = await ctx.request('DELETE', `/api/saved/items/${item.id}`, {
      token: session,
      headers: { 'idempotency-key': 'del-1' },
    })
    expect(replay.status).toBe(204)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(
      (await ctx.request('GET', `/api/saved/items/${item.id}`, { token: session })).status,
    ).toBe(404)
    expect(
      (await ctx.request('DELETE', `/api/saved/items/${item.id}`, { token: session })).status,
    ).toBe(404)
    const left = await ctx.db.$query(
      `SELECT (SELECT count(*) FROM item_tags) AS tags, (SELECT count(*) FROM item_events WHERE action <> 'deleted') AS events, (SELECT count(*) FROM item_events WHERE action = 'deleted') AS deleted`,
    )
    expect(left[0]).toEqual({ tags: 0, events: 0, deleted: 1 })
  })
})

describe('Idempotency-Key', () => {
  test('a repeat while the first request still runs is 409 idempotency_key_in_flight; afterwards it replays', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const headers = { 'idempotency-key': 'slow-1' }
    // A claim next that waits holds its key for the whole wait.
    const first = ctx.json('POST', '/api/saved/inbox/claim', {
      token: agent.token,
      body: { wait_seconds: 1 },
      headers,
    })
    await Bun.sleep(100)
    const repeat = await ctx.json('POST', '/api/saved/inbox/claim', {
      token: agent.token,
      body: { wait_seconds: 1 },
      headers,
    })
    expect(repeat.status).toBe(409)
    expectEnvelope(repeat.body, 'idempotency_key_in_flight')
    const done = await first
    const replay = await ctx.json('POST', '/api/saved/inbox/claim', {
      token: agent.token,
      body: { wait_seconds: 1 },
      headers,
    })
    expect(replay.body).toEqual(done.body)
    expect(replay.res.headers.get('idempotent-replayed')).toBe('true')
  })

  test('a replay is byte-identical and changes nothing; a different body is 422; a malformed key 400; token creation 400', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    const key = { 'idempotency-key': 'k-1' }
    const first = await ctx.request('PATCH', `/api/saved/items/${item.id}`, {
      token: agent.token,
      body: { workflow_status: 'done' },
      headers: key,
    })
    const firstBody = await first.text()
    expect(first.status).toBe(200)
    const events = async () =>
      Number((await ctx.db.$query('SELECT count(*) AS n FROM item_events'))[0]!.n)
    const before = await events()
    const again = await ctx.request('PATCH', `/api/saved/items/${item.id}`, {
      token: agent.token,
      body: { workflow_status: 'done' },
      headers: key,
    })
    expect(again.status).toBe(200)
    expect(await again.text()).toBe(firstBody)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await events()).toBe(before)
    const other = await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: agent.token,
      body: { workflow_status: 'pending' },
      headers: key,
    })
    expect(other.status).toBe(422)
    expectEnvelope(other.body, 'idempotency_key_reused')
    const bad = await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: agent.token,
      body: { workflow_status: 'pending' },
      headers: { 'idempotency-key': 'é' },
    })
    expect(bad.status).toBe(400)
    const long = await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: agent.token,
      body: { workflow_status: 'pending' },
      headers: { 'idempotency-key': 'x'.repeat(256) },
    })
    expect(long.status).toBe(400)
    const tok = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: { name: 'n', scopes: ['read_items'] },
      headers: { 'idempotency-key': 't' },
    })
    expect(tok.status).toBe(400)
    // Keys are per caller: the same key from the owner is a new request.
    const owner = await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: session,
      body: { workflow_status: 'pending' },
      headers: key,
    })
    expect(owner.status).toBe(200)
    expect(owner.res.headers.get('idempotent-replayed')).toBeNull()
    // Kept 24 hours: after that the key runs again.
    ctx.clock.advance(24 * 3600 * 1000 + 1)
    const later = await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: agent.token,
      body: { workflow_status: 'pending' },
      headers: key,
    })
    expect(later.status).toBe(409) // it ran: already pending
    expect(later.res.headers.get('idempotent-replayed')).toBeNull()
  })

  test('a retried create after a lost answer makes one item; concurrent duplicates never both apply', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const create = () =>
      ctx.request('POST', '/api/saved/items', {
        token: session,
        body: { type: 'event', title: 'once' },
        headers: { 'idempotency-key': 'c-1' },
      })
    const answers = await Promise.all(Array.from({ length: 10 }, create))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1)
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
    const ids = new Set(
      (await Promise.all(answers.filter((a) => a.status === 201).map((a) => a.json()))).map(
        (b: any) => b.id,
      ),
    )
    expect(ids.size).toBe(1)
    expect(Number((await ctx.db.$query('SELECT count(*) AS n FROM items'))[0]!.n)).toBe(1)
    const retried = await create()
    expect(retried.status).toBe(201)
    expect((await retried.json()).id).toBe([...ids][0])
  })

  test('claim next with a key: a retry after a timeout gets the same item, not a second one', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    await seedInbox(ctx.db, 'alice', 3)
    const headers = { 'idempotency-key': 'claim-1' }
    const a = await ctx.json('POST', '/api/saved/inbox/claim', {
      token: agent.token,
      body: {},
      headers,
    })
    const b = await ctx.json('POST', '/api/saved/inbox/claim', {
      token: agent.token,
      body: {},
      headers,
    })
    expect(b.body).toEqual(a.body)
    expect(
      Number(
        (await ctx.db.$query('SELECT count(*) AS n FROM items WHERE claim_id IS NOT NULL'))[0]!.n,
      ),
    ).toBe(1)
  })
})
