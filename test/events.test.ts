import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { agentToken, createItem, expectEnvelope, JWT_SECRET, sessionToken, setup } from './helpers'
import { startServer } from './server'
import { sseReader } from './sse'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

async function servers(n: number, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'saved-sse-'))
  dirs.push(dir)
  const shared = { DATA_DIR: dir, DATABASE_URL: `file:${dir}/shared.db`, JWT_SECRET, ...env }
  const started = []
  for (let i = 0; i < n; i++) {
    const s = await startServer(shared)
    procs.push(s.proc)
    started.push(s)
  }
  return started.map((s) => s.base)
}

const call = async (base: string, method: string, path: string, token: string, body?: unknown) => {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

const open = async (
  base: string,
  token: string,
  path = '/api/saved/events',
  headers: Record<string, string> = {},
) => {
  const controller = new AbortController()
  const res = await fetch(base + path, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/event-stream')
  const reader = sseReader(res)
  return Object.assign(reader, { close: () => (void reader.cancel(), controller.abort()) })
}

describe('GET /api/saved/events (SSE) against a listening server', () => {
  test('events arrive in order; Last-Event-ID and ?after= replay what was missed', async () => {
    const [base] = await servers(1)
    const alice = await sessionToken('alice')
    const bob = await sessionToken('bob')
    const earlier = await call(base!, 'POST', '/api/saved/items', alice, {
      type: 'event',
      title: 'before the stream',
    })
    const stream = await open(base!, alice)
    const bobStream = await open(base!, bob)
    const item = (
      await call(base!, 'POST', '/api/saved/items', alice, {
        type: 'event',
        title: 'one',
        requested_action: 'workflow',
      })
    ).body
    await call(base!, 'POST', '/api/saved/items', bob, { type: 'event', title: 'bob' })
    await call(base!, 'PATCH', `/api/saved/items/${item.id}`, alice, { claim_action: 'claim' })
    await call(base!, 'PATCH', `/api/saved/items/${item.id}`, alice, { workflow_status: 'done' })
    const got = [await stream.record(), await stream.record(), await stream.record()]
    // Without Last-Event-ID or after, the stream starts with the next change.
    expect(got.map((e) => e.event)).toEqual(['created', 'claim', 'done'])
    expect(got.every((e) => e.data.item_id === item.id && e.data.seq === e.id)).toBe(true)
    expect(got.map((e) => Number(e.id))).toEqual(
      [...got.map((e) => Number(e.id))].sort((a, b) => a - b),
    )
    expect(got[1]!.data.actor).toEqual({ kind: 'user', id: 'alice', name: null })
    expect(got[2]!.data.item.workflow_status).toBe('done')
    expect(earlier.status).toBe(201)
    // Bob's stream carries only Bob's change.
    const bobs = await bobStream.record()
    expect(bobs.data.item.title).toBe('bob')
    stream.close()
    bobStream.close()

    // Missed while disconnected: a note and a deletion.
    await call(base!, 'PATCH', `/api/saved/items/${item.id}`, alice, { resolution_note: 'noted' })
    const other = (
      await call(base!, 'POST', '/api/saved/items', alice, { type: 'media', title: 'two' })
    ).body
    expect(
      (
        await fetch(`${base}/api/saved/items/${other.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${alice}` },
        })
      ).status,
    ).toBe(204)

    const resumed = await open(base!, alice, '/api/saved/events', { 'last-event-id': got[2]!.id })
    const replay = [await resumed.record(), await resumed.record()]
    expect(replay.map((e) => e.event)).toEqual(['note', 'deleted'])
    expect(replay[1]!.data.item).toBeNull()
    expect(Number(replay[0]!.id)).toBeGreaterThan(Number(got[2]!.id))
    // And on from there, live.
    await call(base!, 'POST', '/api/saved/items', alice, { type: 'event', title: 'three' })
    expect((await resumed.record()).event).toBe('created')
    resumed.close()

    // ?after= replays from the given seq as well.
    const fromQuery = await open(base!, alice, `/api/saved/events?after=${got[0]!.id}`)
    expect((await fromQuery.record()).id).toBe(got[1]!.id)
    fromQuery.close()
  }, 30_000)

  test('a change made through a second server process reaches a stream on the first within 2 s', async () => {
    const [first, second] = await servers(2)
    const alice = await sessionToken('alice')
    const stream = await open(first!, alice)
    const inbox = await open(first!, alice, '/api/saved/events?inbox=true')
    for (let round = 0; round < 3; round++) {
      const started = Date.now()
      const made = (
        await call(second!, 'POST', '/api/saved/items', alice, {
          type: 'event',
          title: `r${round}`,
          requested_action: round === 1 ? null : 'calendar',
        })
      ).body
      const event = await stream.record(2000)
      expect(Date.now() - started).toBeLessThan(2000)
      expect(event.data.item_id).toBe(made.id)
      expect(event.data.item.title).toBe(`r${round}`)
      if (round !== 1) expect((await inbox.record(2000)).data.item_id).toBe(made.id)
    }
    stream.close()
    inbox.close()
  }, 30_000)
})

describe('event streams in-process', () => {
  test('keep-alive comments, ?inbox=true, listeners removed when the client goes away', async () => {
    const ctx = await setup({ SSE_KEEPALIVE_MS: '100' })
    const alice = await sessionToken('alice')
    const controller = new AbortController()
    const res = await ctx.app.handle(
      new Request('http://localhost/api/saved/events?inbox=true', {
        headers: { authorization: `Bearer ${alice}` },
        signal: controller.signal,
      }),
    )
    expect(res.status).toBe(200)
    const stream = sseReader(res)
    expect(ctx.app.deps.changes.streamCount).toBe(1)
    const started = Date.now()
    expect((await stream.next((e) => e.comment === 'keep-alive', 1000)).comment).toBe('keep-alive')
    expect(Date.now() - started).toBeLessThan(1000)
    await createItem(ctx, alice, { title: 'not in the inbox' })
    const wanted = await createItem(ctx, alice, { title: 'inbox', requested_action: 'reminder' })
    const event = await stream.record(2000)
    expect(event.data.item_id).toBe(wanted.id)
    expect(event.data.item.requested_action).toBe('reminder')
    // An inbox item's deletion still reaches the inbox stream.
    await ctx.request('DELETE', `/api/saved/items/${wanted.id}`, { token: alice })
    const deleted = await stream.record(2000)
    expect([deleted.event, deleted.data.item]).toEqual(['deleted', null])
    controller.abort()
    await stream.cancel()
    for (let i = 0; i < 20 && ctx.app.deps.changes.streamCount > 0; i++) await Bun.sleep(10)
    expect(ctx.app.deps.changes.streamCount).toBe(0)
  })

  test('a client that hangs up over a real socket has its listener removed', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    ctx.app.listen({ port: 0, hostname: '127.0.0.1' })
    try {
      const base = `http://127.0.0.1:${ctx.app.server!.port}`
      const streams = await Promise.all([0, 1, 2].map(() => open(base, alice)))
      expect(ctx.app.deps.changes.streamCount).toBe(3)
      await createItem(ctx, alice, { title: 'seen by all' })
      for (const s of streams) expect((await s.record(2000)).data.item.title).toBe('seen by all')
      streams[0]!.close()
      streams[1]!.close()
      for (let i = 0; i < 100 && ctx.app.deps.changes.streamCount > 1; i++) await Bun.sleep(20)
      expect(ctx.app.deps.changes.streamCount).toBe(1)
      streams[2]!.close()
      for (let i = 0; i < 100 && ctx.app.deps.changes.streamCount > 0; i++) await Bun.sleep(20)
      expect(ctx.app.deps.changes.streamCount).toBe(0)
    } finally {
      await ctx.app.stop(true)
    }
  })

  test('bad Last-Event-ID is 400, a token without read_items is 403, none is 401', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    for (const id of ['nope', '424242']) {
      const bad = await ctx.json('GET', '/api/saved/events', {
        token: alice,
        headers: { 'last-event-id': id },
      })
      expect(bad.status).toBe(400)
      expectEnvelope(bad.body, 'invalid_request')
    }
    const writer = await agentToken(ctx, alice, ['update_workflow_status'])
    const denied = await ctx.json('GET', '/api/saved/events', { token: writer.token })
    expect(denied.status).toBe(403)
    expect((await ctx.request('GET', '/api/saved/events')).status).toBe(401)
    expect(ctx.app.deps.changes.streamCount).toBe(0)
  })
})
