import { describe, expect, test } from 'bun:test'
import {
  setup,
  sessionToken,
  agentToken,
  createItem,
  expectEnvelope,
  type TestContext,
} from './helpers'

async function world() {
  const ctx = await setup()
  const session = await sessionToken('alice')
  const a = await agentToken(ctx, session, undefined, 'agent-a')
  const b = await agentToken(ctx, session, undefined, 'agent-b')
  const item = await createItem(ctx, session, { requested_action: 'workflow', tags: ['x'] })
  const patch = (token: string, body: unknown, id = item.id) =>
    ctx.json('PATCH', `/api/saved/items/${id}`, { token, body })
  return { ctx, session, a: a.token, b: b.token, aId: a.id, item, patch }
}

const snapshot = async (ctx: TestContext) => ({
  items: (await ctx.db.$client.execute('SELECT * FROM items ORDER BY id')).rows.map((r) => ({
    ...r,
  })),
  tags: (await ctx.db.$client.execute('SELECT * FROM item_tags ORDER BY item_id, tag')).rows.map(
    (r) => ({ ...r }),
  ),
  events: (await ctx.db.$client.execute('SELECT count(*) AS n FROM item_events')).rows[0]!.n,
})

describe('workflow PATCH: every row of CONTRACT 4, for both kinds of claimant', () => {
  for (const kind of ['agent', 'user'] as const) {
    test(`${kind}: claim, renew, conflict, release, done, reopen, transitions`, async () => {
      const w = await world()
      const me = kind === 'agent' ? w.a : w.session
      const other = kind === 'agent' ? w.b : w.a

      const claimed = await w.patch(me, { claim_action: 'claim' })
      expect(claimed.status).toBe(200)
      expect(claimed.body.claim_status).toBe('mine')
      expect(claimed.body.claimed_by.kind).toBe(kind === 'agent' ? 'agent_token' : 'user')
      const lease = Date.parse(claimed.body.lease_expires_at) - Date.now()
      expect(lease).toBeGreaterThan(295_000)
      expect(lease).toBeLessThanOrEqual(300_000)

      const renewed = await w.patch(me, { claim_action: 'claim', lease_seconds: 600 })
      expect(renewed.status).toBe(200)
      expect(Date.parse(renewed.body.lease_expires_at)).toBeGreaterThan(
        Date.parse(claimed.body.lease_expires_at),
      )

      const seenByOther = await w.ctx.json('GET', `/api/saved/items/${w.item.id}`, { token: other })
      expect(seenByOther.body.claim_status).toBe('claimed')

      for (const body of [
        { claim_action: 'claim' },
        { claim_action: 'release' },
        { workflow_status: 'done' },
        { resolution_note: 'n' },
      ]) {
        const conflict = await w.patch(other, body)
        expect({ body, status: conflict.status }).toEqual({ body, status: 409 })
        expectEnvelope(conflict.body, 'claim_conflict')
      }

      const released = await w.patch(me, { claim_action: 'release' })
      expect(released.status).toBe(200)
      expect(released.body.claim_status).toBe('available')
      expect(released.body.claimed_by).toBeNull()
      const releaseAgain = await w.patch(me, { claim_action: 'release' })
      expect(releaseAgain.status).toBe(200)

      await w.patch(me, { claim_action: 'claim' })
      const done = await w.patch(me, { workflow_status: 'done', resolution_note: 'booked' })
      expect(done.status).toBe(200)
      expect(done.body.workflow_status).toBe('done')
      expect(done.body.claim_status).toBe('available')
      expect(done.body.resolution_note).toBe('booked')

      const doneAgain = await w.patch(me, { workflow_status: 'done' })
      expect(doneAgain.status).toBe(409)
      expectEnvelope(doneAgain.body, 'invalid_transition')

      const reopened = await w.patch(other, { workflow_status: 'pending' })
      expect(reopened.status).toBe(200)
      expect(reopened.body.workflow_status).toBe('pending')
      const reopenAgain = await w.patch(other, { workflow_status: 'pending' })
      expect(reopenAgain.status).toBe(409)
      expectEnvelope(reopenAgain.body, 'invalid_transition')
    })
  }

  test('two agent tokens of one user are two claimants; the owner session is a third', async () => {
    const w = await world()
    expect((await w.patch(w.a, { claim_action: 'claim' })).status).toBe(200)
    expect((await w.patch(w.b, { claim_action: 'claim' })).status).toBe(409)
    expect((await w.patch(w.session, { claim_action: 'claim' })).status).toBe(409)
  })

  test('an expired lease reads as available and can be taken over, with no sweeper', async () => {
    const w = await world()
    const claimed = await w.patch(w.a, { claim_action: 'claim', lease_seconds: 1 })
    expect(claimed.body.claim_status).toBe('mine')
    expect((await w.patch(w.b, { claim_action: 'claim' })).status).toBe(409)
    w.ctx.clock.advance(1100)
    const seen = await w.ctx.json('GET', `/api/saved/items/${w.item.id}`, { token: w.a })
    expect(seen.body.claim_status).toBe('available')
    expect(seen.body.lease_expires_at).toBeNull()
    const taken = await w.patch(w.b, { claim_action: 'claim' })
    expect(taken.status).toBe(200)
    expect(taken.body.claimed_by.name).toBe('agent-b')
  })

  test('corrections: the owner may correct a claimed item; agents get 403 forbidden', async () => {
    const w = await world()
    await w.patch(w.a, { claim_action: 'claim' })
    const corrected = await w.patch(w.session, {
      corrections: { title: 'Fixed', tags: [' y ', 'z', 'y', ''], action_note: 'call back' },
    })
    expect(corrected.status).toBe(200)
    expect(corrected.body.title).toBe('Fixed')
    expect(corrected.body.tags).toEqual(['y', 'z'])
    expect(corrected.body.claim_status).toBe('claimed')
    const byTag = await w.ctx.json('GET', '/api/saved/items?tag=z', { token: w.session })
    expect(byTag.body.items.map((i: any) => i.id)).toEqual([w.item.id])
    expect(
      (await w.ctx.json('GET', '/api/saved/items?tag=x', { token: w.session })).body.items,
    ).toEqual([])

    const byAgent = await w.patch(w.a, { corrections: { title: 'Agent' } })
    expect(byAgent.status).toBe(403)
    expectEnvelope(byAgent.body, 'forbidden')
    // Corrections with a workflow change from the owner are blocked by another's claim, atomically.
    const mixed = await w.patch(w.session, {
      resolution_note: 'x',
      corrections: { title: 'Never' },
    })
    expect(mixed.status).toBe(409)
    const after = await w.ctx.json('GET', `/api/saved/items/${w.item.id}`, { token: w.session })
    expect(after.body.title).toBe('Fixed')
  })

  test('bad bodies are 400 and change nothing', async () => {
    const w = await world()
    const before = await snapshot(w.ctx)
    const bodies: unknown[] = [
      {},
      { id: 'x' },
      { user_id: 'bob' },
      { status: 'failed' },
      { workflow_status: 'archived' },
      { claim_action: 'steal' },
      { lease_seconds: 60 },
      { claim_action: 'release', lease_seconds: 60 },
      { claim_action: 'claim', lease_seconds: 0 },
      { claim_action: 'claim', lease_seconds: 86_401 },
      { claim_action: 'claim', lease_seconds: 1.5 },
      { claim_action: 'claim', lease_seconds: '60' },
      { corrections: {} },
      { corrections: { owner: 'x' } },
      { corrections: { tags: 'a' } },
      { corrections: { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) } },
      { corrections: { tags: ['x'.repeat(65)] } },
      { corrections: { title: 'x'.repeat(501) } },
      { resolution_note: 'x'.repeat(10_001) },
      [],
      42,
      null,
    ]
    for (const body of bodies) {
      const res = await w.patch(w.session, body)
      expect({ body, status: res.status }).toEqual({ body, status: 400 })
      expectEnvelope(res.body, 'invalid_request')
    }
    for (const raw of ['"text"', '{"claim_action":', '\u0000']) {
      const res = await w.ctx.json('PATCH', `/api/saved/items/${w.item.id}`, {
        token: w.session,
        body: raw,
        headers: { 'content-type': 'application/json' },
      })
      expect(res.status).toBe(400)
    }
    const noType = await w.ctx.json('PATCH', `/api/saved/items/${w.item.id}`, {
      token: w.session,
      body: 'claim',
    })
    expect(noType.status).toBe(415)
    expectEnvelope(noType.body, 'unsupported_media_type')
    const malformed = await w.ctx.json('PATCH', `/api/saved/items/${w.item.id}`, {
      token: w.session,
      body: '{"claim_action":',
      headers: { 'content-type': 'application/json' },
    })
    expect(malformed.status).toBe(400)
    expect(await snapshot(w.ctx)).toEqual(before)
  })

  test('unknown and foreign items are the same 404', async () => {
    const w = await world()
    const bob = await sessionToken('bob')
    const foreign = await w.patch(bob, { claim_action: 'claim' })
    const unknown = await w.patch(bob, { claim_action: 'claim' }, 'itm_nope')
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual(unknown.body)
    expect(
      (await w.ctx.json('GET', `/api/saved/items/${w.item.id}/history`, { token: bob })).status,
    ).toBe(404)
  })

  test('a PATCH that fails half-way changes nothing (claim + done on an item already done)', async () => {
    const w = await world()
    await w.patch(w.session, { workflow_status: 'done' })
    const before = await snapshot(w.ctx)
    const res = await w.patch(w.a, {
      claim_action: 'claim',
      workflow_status: 'done',
      resolution_note: 'n',
    })
    expect(res.status).toBe(409)
    expectEnvelope(res.body, 'invalid_transition')
    expect(await snapshot(w.ctx)).toEqual(before)
  })

  test('30 concurrent claims from six agent tokens: exactly one succeeds', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agents = await Promise.all(
      Array.from({ length: 6 }, (_, i) => agentToken(ctx, session, undefined, `agent-${i}`)),
    )
    for (let round = 0; round < 5; round++) {
      const item = await createItem(ctx, session, { requested_action: 'workflow' })
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          ctx.json('PATCH', `/api/saved/items/${item.id}`, {
            token: agents[i % 6]!.token,
            body: { claim_action: 'claim' },
          }),
        ),
      )
      const winners = results.filter((r) => r.status === 200)
      // The winner may also renew its own claim; count distinct claimants instead.
      const holders = new Set(winners.map((r) => r.body.claimed_by.id))
      expect(holders.size).toBe(1)
      expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true)
      const winner = [...holders][0]
      expect(winners.every((r) => r.body.claimed_by.id === winner)).toBe(true)
    }
  })

  test('history records every change, oldest first, with who and what', async () => {
    const w = await world()
    await w.patch(w.a, { claim_action: 'claim', lease_seconds: 60 })
    await w.patch(w.a, { claim_action: 'claim' })
    await w.patch(w.a, { resolution_note: 'working on it' })
    await w.patch(w.a, { workflow_status: 'done' })
    await w.patch(w.session, { workflow_status: 'pending' })
    await w.patch(w.b, { claim_action: 'release' }) // nothing held: no event
    await w.patch(w.session, { corrections: { title: 'T' } })
    const { status, body } = await w.ctx.json('GET', `/api/saved/items/${w.item.id}/history`, {
      token: w.a,
    })
    expect(status).toBe(200)
    expect(body.events.map((e: any) => [e.action, e.from, e.to])).toEqual([
      ['claim', 'available', 'claimed'],
      ['renew', 'claimed', 'claimed'],
      ['note', null, 'working on it'],
      ['done', 'pending', 'done'],
      ['reopen', 'done', 'pending'],
      ['correction', null, null],
    ])
    expect(body.events[0].actor).toEqual({ kind: 'agent_token', id: w.aId, name: 'agent-a' })
    expect(body.events[4].actor).toEqual({ kind: 'user', id: 'alice', name: null })
    expect(body.events[5].note).toBe('title')
  })
})
