import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { agentToken, createItem, JWT_SECRET, sessionToken, setup } from './helpers'
import { startServer } from './server'
import { sseReader } from './sse'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const SUBSCRIPTION = `subscription ($after: String, $inbox: Boolean) {
  itemChanged(after: $after, inbox: $inbox) { seq action itemId actor { kind id } item { id title workflowStatus claimStatus } }
}`

describe('GraphQL changes', () => {
  test('query changes: a connection whose endCursor always resumes', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    const a = await createItem(ctx, alice, { title: 'a', requested_action: 'workflow' })
    await ctx.json('PATCH', `/api/saved/items/${a.id}`, {
      token: alice,
      body: { claim_action: 'claim' },
    })
    await createItem(ctx, alice, { title: 'b' })
    const q = (after: string | null, first: number) =>
      ctx.json('POST', '/graphql', {
        token: alice,
        body: {
          query:
            'query ($after: String, $first: Int) { changes(after: $after, first: $first) { edges { cursor node { seq action itemId item { title claimStatus } } } pageInfo { hasNextPage endCursor } } }',
          variables: { after, first },
        },
      })
    const one = await q(null, 2)
    expect(one.body.errors).toBeUndefined()
    const c1 = one.body.data.changes
    expect(c1.edges.map((e: any) => e.node.action)).toEqual(['CREATED', 'CLAIM'])
    expect(c1.edges[1].node.item).toEqual({ title: 'a', claimStatus: 'MINE' })
    expect(c1.pageInfo.hasNextPage).toBe(true)
    const two = (await q(c1.pageInfo.endCursor, 2)).body.data.changes
    expect(two.edges.map((e: any) => e.node.item.title)).toEqual(['b'])
    expect(two.pageInfo.hasNextPage).toBe(false)
    const three = (await q(two.pageInfo.endCursor, 2)).body.data.changes
    expect(three.edges).toEqual([])
    expect(three.pageInfo.endCursor).toBe(two.pageInfo.endCursor)
    const bad = await q('nope', 2)
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT')
  })

  test('subscription itemChanged over SSE: in order, resumable, and fed by a second server process within 2 s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-gqlsub-'))
    dirs.push(dir)
    const env = { DATA_DIR: dir, DATABASE_URL: `file:${dir}/shared.db`, JWT_SECRET }
    const first = await startServer(env)
    procs.push(first.proc)
    const second = await startServer(env)
    procs.push(second.proc)
    const alice = await sessionToken('alice')
    const rest = async (base: string, method: string, path: string, body?: unknown) =>
      (
        await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
          body: body ? JSON.stringify(body) : undefined,
        })
      ).json() as any
    const subscribe = async (variables: Record<string, unknown>) => {
      const controller = new AbortController()
      const res = await fetch(`${first.base}/graphql`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${alice}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: JSON.stringify({ query: SUBSCRIPTION, variables }),
        signal: controller.signal,
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('text/event-stream')
      const reader = sseReader(res)
      return {
        async change(timeoutMs = 2000) {
          const e = await reader.next((e) => e.event === 'next', timeoutMs)
          const payload = JSON.parse(e.data!)
          expect(payload.errors).toBeUndefined()
          return payload.data.itemChanged
        },
        close: () => (void reader.cancel(), controller.abort()),
      }
    }

    const sub = await subscribe({})
    await Bun.sleep(100)
    const item = await rest(second.base, 'POST', '/api/saved/items', {
      type: 'event',
      title: 'live',
      requested_action: 'workflow',
    })
    const started = Date.now()
    const created = await sub.change()
    expect(Date.now() - started).toBeLessThan(2000)
    expect(created).toMatchObject({
      action: 'CREATED',
      itemId: item.id,
      item: { title: 'live', workflowStatus: 'PENDING' },
    })
    await rest(second.base, 'PATCH', `/api/saved/items/${item.id}`, { claim_action: 'claim' })
    await rest(first.base, 'PATCH', `/api/saved/items/${item.id}`, { workflow_status: 'done' })
    const claim = await sub.change()
    const done = await sub.change()
    expect([claim.action, done.action]).toEqual(['CLAIM', 'DONE'])
    expect(Number(done.seq)).toBeGreaterThan(Number(claim.seq))
    expect(claim.actor).toEqual({ kind: 'USER', id: 'alice' })
    sub.close()

    // Resume after the first record: what came after is replayed, in order.
    const resumed = await subscribe({ after: created.seq })
    expect((await resumed.change()).seq).toBe(claim.seq)
    expect((await resumed.change()).seq).toBe(done.seq)
    resumed.close()
  }, 30_000)

  test('a subscription that the client leaves removes its listener', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    const controller = new AbortController()
    const res = await ctx.app.handle(
      new Request('http://localhost/graphql', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${alice}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: JSON.stringify({ query: SUBSCRIPTION, variables: { inbox: true } }),
        signal: controller.signal,
      }),
    )
    const reader = sseReader(res)
    for (let i = 0; i < 50 && ctx.app.deps.changes.streamCount === 0; i++) await Bun.sleep(10)
    expect(ctx.app.deps.changes.streamCount).toBe(1)
    await createItem(ctx, alice, { title: 'not inbox' })
    const wanted = await createItem(ctx, alice, { title: 'inbox', requested_action: 'save' })
    const e = await reader.next((e) => e.event === 'next', 2000)
    expect(JSON.parse(e.data!).data.itemChanged.itemId).toBe(wanted.id)
    controller.abort()
    await reader.cancel()
    for (let i = 0; i < 50 && ctx.app.deps.changes.streamCount > 0; i++) await Bun.sleep(10)
    expect(ctx.app.deps.changes.streamCount).toBe(0)
  })

  test('subscription arguments are honoured, inline or as variables; a bad after or a missing scope is an error event', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    const first = await createItem(ctx, alice, { title: 'one' })
    const second = await createItem(ctx, alice, { title: 'two', requested_action: 'save' })
    const open = async (token: string, body: unknown) => {
      const res = await ctx.app.handle(
        new Request('http://localhost/graphql', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'text/event-stream',
          },
          body: JSON.stringify(body),
        }),
      )
      return sseReader(res)
    }
    // Inline `after: "0"` replays from the start; `inbox: true` leaves out the item without a requested action.
    const inline = await open(alice, {
      query: 'subscription { itemChanged(after: "0", inbox: true) { itemId } }',
    })
    expect(
      JSON.parse((await inline.next((e) => e.event === 'next', 2000)).data!).data.itemChanged
        .itemId,
    ).toBe(second.id)
    await inline.cancel()
    const named = await open(alice, {
      query: 'subscription ($from: String) { itemChanged(after: $from) { itemId } }',
      variables: { from: '0' },
    })
    expect(
      JSON.parse((await named.next((e) => e.event === 'next', 2000)).data!).data.itemChanged.itemId,
    ).toBe(first.id)
    await named.cancel()
    const bad = await open(alice, {
      query: 'subscription ($from: String) { itemChanged(after: $from) { itemId } }',
      variables: { from: 'nope' },
    })
    const error = JSON.parse((await bad.next((e) => e.event === 'next', 2000)).data!)
    expect(error.errors[0].extensions.code).toBe('BAD_USER_INPUT')
    const writer = await agentToken(ctx, alice, ['update_workflow_status'])
    const denied = await open(writer.token, { query: 'subscription { itemChanged { itemId } }' })
    expect(
      JSON.parse((await denied.next((e) => e.event === 'next', 2000)).data!).errors[0].extensions
        .code,
    ).toBe('FORBIDDEN')
    for (let i = 0; i < 50 && ctx.app.deps.changes.streamCount > 0; i++) await Bun.sleep(10)
    expect(ctx.app.deps.changes.streamCount).toBe(0)
  })
})
