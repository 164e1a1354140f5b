import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { loadConfig } from '../src/config'
import { createApp } from '../src/app'
import { openDatabase } from '../src/db/client'
import { pinnedTarget } from '../src/domain/network-guard'
import { createLogger } from '../src/logger'
import {
  agentToken,
  createItem,
  expectEnvelope,
  JWT_SECRET,
  sessionToken,
  setup,
  type TestContext,
} from './helpers'
import { startServer } from './server'

interface Received {
  at: number
  headers: Record<string, string>
  body: string
}

const stops: (() => void)[] = []
afterEach(() => {
  for (const stop of stops.splice(0)) stop()
})

/** A real HTTP receiver on loopback; `answer` decides each response (status, optional delay). */
function receiver(
  answer: (r: Received, count: number) => { status: number; delayMs?: number } = () => ({
    status: 200,
  }),
) {
  const received: Received[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const r: Received = {
        at: Date.now(),
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      }
      received.push(r)
      const { status, delayMs } = answer(
        r,
        received.filter((x) => x.headers['webhook-id'] === r.headers['webhook-id']).length,
      )
      if (delayMs) await Bun.sleep(delayMs)
      return new Response(status === 204 ? null : 'ok', { status })
    },
  })
  stops.push(() => server.stop(true))
  return { url: `http://127.0.0.1:${server.port}/hook`, received }
}

async function until<T>(check: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value) return value
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await Bun.sleep(20)
  }
}

const FAST = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_POLL_MS: '25',
  WEBHOOK_RETRY_SCHEDULE: '0.3,0.6',
  WEBHOOK_TIMEOUT_MS: '300',
}

async function register(ctx: TestContext, token: string, body: Record<string, unknown>) {
  const res = await ctx.json('POST', '/api/saved/webhooks', { token, body })
  if (res.status !== 201)
    throw new Error(`webhook creation failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

describe('webhook endpoints', () => {
  test('create (secret once), list, delete; session only; at most 10 per user; another user sees 404', async () => {
    const ctx = await setup(FAST)
    const alice = await sessionToken('alice')
    const bob = await sessionToken('bob')
    const { url } = receiver()
    const created = await ctx.json('POST', '/api/saved/webhooks', {
      token: alice,
      body: { url, actions: ['done', 'done', 'claim'], description: 'ci' },
    })
    expect(created.status).toBe(201)
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(created.body).toMatchObject({
      url,
      actions: ['done', 'claim'],
      description: 'ci',
      enabled: true,
      disabled_reason: null,
    })
    const list = await ctx.json('GET', '/api/saved/webhooks', { token: alice })
    expect(list.body.webhooks).toHaveLength(1)
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret)
    expect((await ctx.json('GET', '/api/saved/webhooks', { token: bob })).body.webhooks).toEqual([])

    const agent = await agentToken(ctx, alice)
    for (const [method, path] of [
      ['GET', '/api/saved/webhooks'],
      ['POST', '/api/saved/webhooks'],
      ['DELETE', `/api/saved/webhooks/${created.body.id}`],
      ['GET', `/api/saved/webhooks/${created.body.id}/deliveries`],
    ] as const) {
      const res = await ctx.json(method, path, {
        token: agent.token,
        ...(method === 'POST' ? { body: { url } } : {}),
      })
      expect(res.status).toBe(401)
      expectEnvelope(res.body, 'session_required')
    }
    for (const body of [
      { url: 'ftp://example.com/x' },
      { url: 'not a url' },
      { url, actions: ['nope'] },
      { url, extra: 1 },
      { url: 'http://user:pw@example.com/' },
    ]) {
      const res = await ctx.json('POST', '/api/saved/webhooks', { token: alice, body })
      expect(res.status).toBe(400)
      expectEnvelope(res.body, 'invalid_request')
    }
    expect(
      (await ctx.json('DELETE', `/api/saved/webhooks/${created.body.id}`, { token: bob })).status,
    ).toBe(404)
    expect(
      (await ctx.json('GET', `/api/saved/webhooks/${created.body.id}/deliveries`, { token: bob }))
        .status,
    ).toBe(404)

    for (let i = 1; i < 10; i++) await register(ctx, alice, { url })
    const over = await ctx.json('POST', '/api/saved/webhooks', { token: alice, body: { url } })
    expect(over.status).toBe(409)
    expectEnvelope(over.body, 'webhook_limit_reached')
    expect(
      (await ctx.request('DELETE', `/api/saved/webhooks/${created.body.id}`, { token: alice }))
        .status,
    ).toBe(204)
    expect(
      (await ctx.request('DELETE', `/api/saved/webhooks/${created.body.id}`, { token: alice }))
        .status,
    ).toBe(404)
    expect(
      (await ctx.json('POST', '/api/saved/webhooks', { token: alice, body: { url } })).status,
    ).toBe(201)
  })

  test('private, loopback and link-local addresses are refused without WEBHOOK_ALLOW_PRIVATE_NETWORKS', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://localhost/x',
      'http://10.1.2.3/',
      'http://192.168.0.10/',
      'http://169.254.169.254/latest',
      'http://[::1]/',
      'http://[fd00::1]/',
      'http://2130706433/',
      'http://0.0.0.0/',
      'http://224.0.0.1/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      const res = await ctx.json('POST', '/api/saved/webhooks', { token: alice, body: { url } })
      expect({ url, status: res.status }).toEqual({ url, status: 400 })
      expect(res.body.error.details.field).toBe('url')
    }
    // A public address literal is accepted (no delivery happens in this test).
    expect(
      (
        await ctx.json('POST', '/api/saved/webhooks', {
          token: alice,
          body: { url: 'https://93.184.215.14/hook' },
        })
      ).status,
    ).toBe(201)
  })
})

describe('connections are pinned to the checked address', () => {
  test('https: the checked IP is dialled; Host, SNI and the certificate check keep the name', async () => {
    const dir = join(import.meta.dir, 'fixtures')
    const cert = readFileSync(join(dir, 'hooks.example.test.crt'), 'utf8')
    const key = readFileSync(join(dir, 'hooks.example.test.key'), 'utf8')
    const seen: string[] = []
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      tls: { cert, key },
      fetch: (r) => (seen.push(r.headers.get('host')!), new Response('ok')),
    })
    stops.push(() => server.stop(true))
    // The name does not resolve at all: only the pinned address can reach the server.
    const url = new URL(`https://hooks.example.test:${server.port}/hook?a=1`)
    const pinned = pinnedTarget(url, '127.0.0.1')
    expect(pinned.target.toString()).toBe(`https://127.0.0.1:${server.port}/hook?a=1`)
    const res = await fetch(pinned.target, {
      method: 'POST',
      headers: { host: pinned.host },
      tls: { serverName: pinned.serverName, ca: cert } as never,
    })
    expect(res.status).toBe(200)
    expect(seen).toEqual([`hooks.example.test:${server.port}`])
    // The certificate is still checked against the name: another name fails.
    const other = pinnedTarget(
      new URL(`https://other.example.test:${server.port}/hook`),
      '127.0.0.1',
    )
    await expect(
      fetch(other.target, {
        headers: { host: other.host },
        tls: { serverName: other.serverName, ca: cert } as never,
      }),
    ).rejects.toThrow()
    expect(
      pinnedTarget(new URL('http://hooks.example.test/x'), '2606:4700::1').target.toString(),
    ).toBe('http://[2606:4700::1]/x')
    expect(pinnedTarget(new URL('http://93.184.215.14:8080/x'), '93.184.215.14')).toEqual({
      target: new URL('http://93.184.215.14:8080/x'),
      host: '93.184.215.14:8080',
    })
  })
})

describe('webhook deliveries against a real receiver', () => {
  test('each matching change is POSTed, signed per Standard Webhooks', async () => {
    const ctx = await setup(FAST)
    const alice = await sessionToken('alice')
    const bob = await sessionToken('bob')
    const all = receiver()
    const doneOnly = receiver()
    const hook = await register(ctx, alice, { url: all.url })
    await register(ctx, alice, { url: doneOnly.url, actions: ['done'] })
    const item = await createItem(ctx, alice, { title: 'hooked', requested_action: 'workflow' })
    await createItem(ctx, bob, { title: 'not alice' })
    await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: alice,
      body: { workflow_status: 'done' },
    })
    await until(() => all.received.length >= 2 && doneOnly.received.length >= 1)
    await Bun.sleep(200)
    expect(all.received).toHaveLength(2)
    expect(doneOnly.received).toHaveLength(1)

    const verifier = new Webhook(hook.secret)
    // Deliveries are attempted concurrently, so they may arrive out of order: order by seq.
    const payloads = all.received
      .map((r) => verifier.verify(r.body, r.headers) as any)
      .sort((a, b) => Number(a.data.seq) - Number(b.data.seq))
    expect(payloads.map((p) => p.type)).toEqual(['item.created', 'item.done'])
    expect(payloads[0].data).toMatchObject({
      item_id: item.id,
      action: 'created',
      actor: { kind: 'user', id: 'alice' },
    })
    expect(payloads[1].data.item).toMatchObject({ id: item.id, workflow_status: 'done' })
    expect(payloads[1].timestamp).toBe(payloads[1].data.at)
    expect(all.received[0]!.headers['content-type']).toBe('application/json')
    expect(all.received[0]!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    // A tampered body, or another endpoint's secret, does not verify.
    expect(() =>
      verifier.verify(all.received[0]!.body.replace('hooked', 'hacked'), all.received[0]!.headers),
    ).toThrow()
    expect(() =>
      new Webhook(`whsec_${Buffer.from('x'.repeat(24)).toString('base64')}`).verify(
        all.received[0]!.body,
        all.received[0]!.headers,
      ),
    ).toThrow()

    const deliveries = await ctx.json('GET', `/api/saved/webhooks/${hook.id}/deliveries`, {
      token: alice,
    })
    expect(deliveries.status).toBe(200)
    // Attempted concurrently, so either may be the most recent: compare as a set.
    expect(
      deliveries.body.deliveries
        .map((d: any) => [d.action, d.attempt, d.status, d.response_status])
        .sort((a: any[], b: any[]) => String(a[0]).localeCompare(String(b[0]))),
    ).toEqual([
      ['created', 1, 'succeeded', 200],
      ['done', 1, 'succeeded', 200],
    ])
  })

  test('delivers on an in-memory database too (one connection, no transaction held open)', async () => {
    const ctx = await setup({ ...FAST, DATABASE_URL: ':memory:' })
    const alice = await sessionToken('alice')
    const target = receiver()
    const hook = await register(ctx, alice, { url: target.url })
    for (let i = 0; i < 5; i++) await createItem(ctx, alice, { title: `m${i}` })
    await until(() => target.received.length >= 5)
    const titles = target.received.map(
      (r) => (new Webhook(hook.secret).verify(r.body, r.headers) as any).data.item.title,
    )
    expect(titles.sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4'])
    expect((await ctx.json('GET', '/api/saved/items', { token: alice })).body.items).toHaveLength(5)
  })

  test('finished deliveries are pruned after 7 days', async () => {
    const ctx = await setup(FAST)
    const alice = await sessionToken('alice', { expiresIn: '30d' })
    const target = receiver()
    const hook = await register(ctx, alice, { url: target.url })
    await createItem(ctx, alice, { title: 'old' })
    await until(() => target.received.length === 1)
    const list = async () =>
      (await ctx.json('GET', `/api/saved/webhooks/${hook.id}/deliveries`, { token: alice })).body
        .deliveries
    let before: any[] = []
    for (let i = 0; i < 50 && before.length === 0; i++) (before = await list()), await Bun.sleep(20)
    expect(before).toHaveLength(1)
    ctx.clock.advance(6 * 24 * 3600 * 1000)
    await Bun.sleep(150)
    expect(await list()).toHaveLength(1)
    ctx.clock.advance(2 * 24 * 3600 * 1000)
    let after: any[] = before
    for (let i = 0; i < 50 && after.length > 0; i++) (after = await list()), await Bun.sleep(20)
    expect(after).toEqual([])
    expect((await ctx.db.$query('SELECT count(*) AS n FROM webhook_deliveries'))[0]!.n).toBe(0)
  })

  test('a 500 and a timeout are retried on the schedule; after the last retry the delivery is given up', async () => {
    const ctx = await setup(FAST)
    const alice = await sessionToken('alice')
    // First delivery: 500, then a timeout, then 200. Second: always 500.
    const target = receiver((r, n) => {
      const created = JSON.parse(r.body).data.item.title === 'first'
      if (!created) return { status: 500 }
      return n === 1 ? { status: 500 } : n === 2 ? { status: 200, delayMs: 800 } : { status: 204 }
    })
    const hook = await register(ctx, alice, { url: target.url })
    await createItem(ctx, alice, { title: 'first' })
    const firstId = (await until(() => target.received[0]))!.headers['webhook-id']
    const attempts = await until(() => {
      const mine = target.received.filter((r) => r.headers['webhook-id'] === firstId)
      return mine.length >= 3 && mine
    })
    const gaps = [attempts[1]!.at - attempts[0]!.at, attempts[2]!.at - attempts[1]!.at]
    // 0.3 s after the 500; 0.6 s after the timed-out attempt ended (0.3 s in).
    expect(gaps[0]).toBeGreaterThanOrEqual(280)
    expect(gaps[0]).toBeLessThan(1500)
    expect(gaps[1]).toBeGreaterThanOrEqual(880)
    expect(gaps[1]).toBeLessThan(2500)
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1)

    await createItem(ctx, alice, { title: 'second' })
    const settled = await (async () => {
      for (let i = 0; i < 150; i++) {
        const res = await ctx.json('GET', `/api/saved/webhooks/${hook.id}/deliveries`, {
          token: alice,
        })
        if (res.body.deliveries.filter((d: any) => d.status === 'failed').length === 1)
          return res.body.deliveries
        await Bun.sleep(20)
      }
      throw new Error('not given up in time')
    })()
    const second = settled.filter(
      (d: any) => d.seq !== settled.find((x: any) => x.status === 'succeeded').seq,
    )
    expect(second.map((d: any) => [d.attempt, d.status, d.response_status])).toEqual([
      [3, 'failed', 500],
      [2, 'retrying', 500],
      [1, 'retrying', 500],
    ])
    expect(second[0].next_attempt_at).toBeNull()
    expect(Date.parse(second[1].next_attempt_at) - Date.parse(second[1].at)).toBe(600)
    const first = settled.filter(
      (d: any) => d.seq === settled.find((x: any) => x.status === 'succeeded').seq,
    )
    expect(first.map((d: any) => [d.attempt, d.status, d.response_status])).toEqual([
      [3, 'succeeded', 204],
      [2, 'retrying', null],
      [1, 'retrying', 500],
    ])
    await Bun.sleep(800)
    expect(target.received.filter((r) => r.headers['webhook-id'] !== firstId)).toHaveLength(3)
  })

  test('410 disables the endpoint; nothing more is delivered to it', async () => {
    const ctx = await setup(FAST)
    const alice = await sessionToken('alice')
    const gone = receiver(() => ({ status: 410 }))
    const hook = await register(ctx, alice, { url: gone.url })
    await createItem(ctx, alice, { title: 'one' })
    await until(() => gone.received.length === 1)
    let hooks: any
    for (let i = 0; i < 100; i++) {
      hooks = (await ctx.json('GET', '/api/saved/webhooks', { token: alice })).body.webhooks
      if (!hooks[0].enabled) break
      await Bun.sleep(20)
    }
    expect(hooks[0]).toMatchObject({ id: hook.id, enabled: false, disabled_reason: 'gone' })
    await createItem(ctx, alice, { title: 'two' })
    await Bun.sleep(500)
    expect(gone.received).toHaveLength(1)
    const deliveries = (
      await ctx.json('GET', `/api/saved/webhooks/${hook.id}/deliveries`, { token: alice })
    ).body.deliveries
    expect(deliveries.map((d: any) => [d.attempt, d.status, d.response_status])).toEqual([
      [1, 'failed', 410],
    ])
  })

  test('50 failed attempts in a row disable the endpoint', async () => {
    const ctx = await setup({ ...FAST, WEBHOOK_RETRY_SCHEDULE: '0' })
    const alice = await sessionToken('alice')
    const failing = receiver(() => ({ status: 503 }))
    const hook = await register(ctx, alice, { url: failing.url })
    for (let i = 0; i < 30; i++) await createItem(ctx, alice, { title: `i${i}` })
    let hooks: any
    for (let i = 0; i < 250; i++) {
      hooks = (await ctx.json('GET', '/api/saved/webhooks', { token: alice })).body.webhooks
      if (!hooks[0].enabled) break
      await Bun.sleep(20)
    }
    expect(hooks[0]).toMatchObject({ id: hook.id, enabled: false, disabled_reason: 'failures' })
    await Bun.sleep(300)
    // 30 changes x 2 attempts were due; the endpoint stopped at 50 (give or take those already in flight).
    expect(failing.received.length).toBeGreaterThanOrEqual(50)
    expect(failing.received.length).toBeLessThan(50 + 16)
    // Nothing is left waiting for a disabled endpoint.
    expect(
      (
        await ctx.db.$query("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'")
      )[0]!.n,
    ).toBe(0)
  })

  test('the guard applies again at delivery: a process without the flag refuses a loopback endpoint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-guard-'))
    stops.push(() => rmSync(dir, { recursive: true, force: true }))
    const open = async (env: Record<string, string>) => {
      const config = loadConfig({
        JWT_SECRET,
        DATA_DIR: dir,
        DATABASE_URL: `file:${dir}/g.db`,
        LOG_LEVEL: 'silent',
        WEBHOOK_POLL_MS: '25',
        WEBHOOK_RETRY_SCHEDULE: '5',
        ...env,
      })
      const db = await openDatabase(config.database)
      const { migrateDatabase } = await import('../src/db/migrate')
      await migrateDatabase(db)
      const app = createApp({ config, db, logger: createLogger('silent') })
      stops.unshift(() => (app.webhooks.stop(), app.deps.changes.close(), db.$client.close()))
      return app
    }
    const permissive = await open({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
    permissive.webhooks.stop()
    const strict = await open({})
    const target = receiver()
    const alice = await sessionToken('alice')
    const call = async (app: typeof strict, method: string, path: string, body?: unknown) => {
      const res = await app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
          body: body ? JSON.stringify(body) : undefined,
        }),
      )
      return { status: res.status, body: (await res.json()) as any }
    }
    const hook = await call(permissive, 'POST', '/api/saved/webhooks', { url: target.url })
    expect(hook.status).toBe(201)
    expect((await call(strict, 'POST', '/api/saved/webhooks', { url: target.url })).status).toBe(
      400,
    )
    await call(permissive, 'POST', '/api/saved/items', { type: 'event', title: 'x' })
    let deliveries: any[] = []
    for (let i = 0; i < 100 && deliveries.length === 0; i++) {
      await Bun.sleep(20)
      deliveries = (await call(strict, 'GET', `/api/saved/webhooks/${hook.body.id}/deliveries`))
        .body.deliveries
    }
    expect(deliveries.map((d) => [d.attempt, d.status, d.response_status])).toEqual([
      [1, 'retrying', null],
    ])
    expect(target.received).toHaveLength(0)
  })

  test('two server processes on one database deliver each attempt exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-whmp-'))
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/shared.db`,
      JWT_SECRET,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_POLL_MS: '10',
      WEBHOOK_RETRY_SCHEDULE: '0.1',
    }
    const first = await startServer(env)
    const second = await startServer(env)
    stops.push(
      () => (
        first.proc.kill(9), second.proc.kill(9), rmSync(dir, { recursive: true, force: true })
      ),
    )
    // Every message fails once, then succeeds: two attempts each, each made once.
    const target = receiver((_r, n) => ({ status: n === 1 ? 500 : 200 }))
    const alice = await sessionToken('alice')
    const post = (base: string, path: string, body: unknown) =>
      fetch(base + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const hook: any = await (
      await post(first.base, '/api/saved/webhooks', { url: target.url })
    ).json()
    expect(hook.secret).toStartWith('whsec_')
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(i % 2 ? first.base : second.base, '/api/saved/items', {
          type: 'event',
          title: `n${i}`,
        }),
      ),
    )
    await until(() => target.received.length >= 60, 15_000)
    await Bun.sleep(1000)
    const byId = new Map<string, number>()
    for (const r of target.received)
      byId.set(r.headers['webhook-id']!, (byId.get(r.headers['webhook-id']!) ?? 0) + 1)
    expect(byId.size).toBe(30)
    expect([...byId.values()].every((n) => n === 2)).toBe(true)
    const verifier = new Webhook(hook.secret)
    const titles = new Set(
      target.received.map((r) => (verifier.verify(r.body, r.headers) as any).data.item.title),
    )
    expect(titles.size).toBe(30)
  }, 40_000)
})
