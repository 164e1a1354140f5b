import { describe, expect, test } from 'bun:test'
import {
  agentToken,
  createItem,
  expectEnvelope,
  sessionToken,
  setup,
  type TestContext,
} from './helpers'

/** Follows next_cursor from `after` until an empty page; returns every record and the final cursor. */
async function walk(
  ctx: TestContext,
  token: string,
  after: string | null,
  limit: number,
  between?: (page: number) => Promise<void>,
) {
  const seen: any[] = []
  let cursor = after
  for (let page = 0; page < 1000; page++) {
    const res = await ctx.json(
      'GET',
      `/api/saved/changes?limit=${limit}${cursor !== null ? `&after=${cursor}` : ''}`,
      { token },
    )
    expect(res.status).toBe(200)
    expect(typeof res.body.next_cursor).toBe('string')
    seen.push(...res.body.changes)
    if (res.body.changes.length === 0) {
      // An empty page keeps the position.
      if (cursor !== null) expect(res.body.next_cursor).toBe(cursor)
      return { seen, cursor: res.body.next_cursor as string }
    }
    cursor = res.body.next_cursor
    await between?.(page)
  }
  throw new Error('walk did not end')
}

describe('GET /api/saved/changes', () => {
  test('a walk with changes made in between sees every record exactly once, in order', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    const first = await createItem(ctx, alice, { requested_action: 'workflow' })
    await ctx.json('PATCH', `/api/saved/items/${first.id}`, {
      token: alice,
      body: { claim_action: 'claim' },
    })
    for (let i = 0; i < 5; i++) await createItem(ctx, alice, { title: `before ${i}` })
    const made: string[] = []
    const { seen, cursor } = await walk(ctx, alice, null, 2, async (page) => {
      if (page < 4) made.push((await createItem(ctx, alice, { title: `during ${page}` })).id)
    })
    const seqs = seen.map((c) => Number(c.seq))
    expect(new Set(seqs).size).toBe(seqs.length)
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs)
    // 6 created + 1 claim before, 4 created during the walk.
    expect(seen).toHaveLength(11)
    expect(seen.filter((c) => c.action === 'created').map((c) => c.item_id)).toEqual(
      expect.arrayContaining(made),
    )
    const claim = seen.find((c) => c.action === 'claim')
    expect(claim.item_id).toBe(first.id)
    expect(claim.actor).toEqual({ kind: 'user', id: 'alice', name: null })
    expect(claim.item.claim_status).toBe('mine')
    expect(claim.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

    // Resuming from the last cursor sees only what came after.
    await ctx.json('PATCH', `/api/saved/items/${first.id}`, {
      token: alice,
      body: { workflow_status: 'done' },
    })
    const rest = await walk(ctx, alice, cursor, 50)
    expect(rest.seen.map((c) => c.action)).toEqual(['done'])
    expect(rest.seen[0].item.workflow_status).toBe('done')
  })

  test('resuming from any next_cursor gives exactly the records after it', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    for (let i = 0; i < 7; i++) await createItem(ctx, alice, { title: `t${i}` })
    const all = (await walk(ctx, alice, null, 200)).seen
    expect(all).toHaveLength(7)
    let cursor: string | null = null
    const cursors: string[] = []
    for (let i = 0; i < 4; i++) {
      const res: any = await ctx.json(
        'GET',
        `/api/saved/changes?limit=2${cursor ? `&after=${cursor}` : ''}`,
        { token: alice },
      )
      cursor = res.body.next_cursor
      cursors.push(cursor!)
    }
    for (const c of cursors) {
      const resumed = (await walk(ctx, alice, c, 3)).seen
      expect(resumed.map((r) => r.seq)).toEqual(
        all.filter((r) => BigInt(r.seq) > BigInt(c)).map((r) => r.seq),
      )
    }
    // An empty feed still answers a cursor that resumes at the start.
    const bob = await sessionToken('bob')
    const empty = await ctx.json('GET', '/api/saved/changes', { token: bob })
    expect(empty.body).toEqual({ changes: [], next_cursor: '0' })
  })

  test('deletions are records; the item reads as null once deleted; another user never sees them', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    const bob = await sessionToken('bob')
    const kept = await createItem(ctx, alice, { title: 'kept' })
    const gone = await createItem(ctx, alice, { title: 'gone', requested_action: 'save' })
    await ctx.json('PATCH', `/api/saved/items/${gone.id}`, {
      token: alice,
      body: { claim_action: 'claim' },
    })
    const bobs = await createItem(ctx, bob, { title: 'bob' })
    const before = await ctx.json('GET', '/api/saved/changes', { token: alice })
    expect(
      before.body.changes.find((c: any) => c.item_id === gone.id && c.action === 'created').item
        .title,
    ).toBe('gone')
    expect(
      (await ctx.request('DELETE', `/api/saved/items/${gone.id}`, { token: alice })).status,
    ).toBe(204)
    const after = await ctx.json('GET', '/api/saved/changes', { token: alice })
    const actions = after.body.changes.map((c: any) => [c.item_id, c.action, c.item === null])
    // The deletion replaces the item's earlier records.
    expect(actions).toEqual([
      [kept.id, 'created', false],
      [gone.id, 'deleted', true],
    ])
    const resumed = await ctx.json('GET', `/api/saved/changes?after=${before.body.next_cursor}`, {
      token: alice,
    })
    expect(resumed.body.changes.map((c: any) => c.action)).toEqual(['deleted'])
    const bobFeed = await ctx.json('GET', '/api/saved/changes', { token: bob })
    expect(bobFeed.body.changes.map((c: any) => c.item_id)).toEqual([bobs.id])
    expect(JSON.stringify(bobFeed.body)).not.toContain(kept.id)
  })

  test('bad after and limit are 400; scope read_items is required', async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    await createItem(ctx, alice)
    // A seq past the log's end was never handed out.
    for (const after of ['abc', '-1', '1.5', '9'.repeat(30), 'eyJ4Ijoi', '999999']) {
      const res = await ctx.json('GET', `/api/saved/changes?after=${encodeURIComponent(after)}`, {
        token: alice,
      })
      expect(res.status).toBe(400)
      expectEnvelope(res.body, 'invalid_request')
    }
    for (const limit of ['0', '201', 'x']) {
      const res = await ctx.json('GET', `/api/saved/changes?limit=${limit}`, { token: alice })
      expect(res.status).toBe(400)
    }
    const writer = await agentToken(ctx, alice, ['update_workflow_status'])
    const denied = await ctx.json('GET', '/api/saved/changes', { token: writer.token })
    expect(denied.status).toBe(403)
    expectEnvelope(denied.body, 'insufficient_scope')
    expect((await ctx.request('GET', '/api/saved/changes')).status).toBe(401)
  })
})
