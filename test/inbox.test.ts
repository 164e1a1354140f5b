import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, createItem, expectEnvelope, walkPages } from './helpers'

describe('the inbox: a work queue', () => {
  test('only items with a requested action, oldest first, with every SPEC 4.4 filter', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    await createItem(ctx, session, { title: 'no action' })
    const a = await createItem(ctx, session, {
      type: 'event',
      requested_action: 'calendar',
      destination_kind: 'calendar',
      destination_name: 'Family',
      tags: ['kids', 'school'],
    })
    const b = await createItem(ctx, session, {
      type: 'media',
      requested_action: 'save',
      destination_kind: 'list',
      destination_name: 'Watch later',
      tags: ['film'],
    })
    const c = await createItem(ctx, session, {
      type: 'reference',
      requested_action: 'reminder',
      tags: ['kids'],
      workflow_status: 'done',
    })
    const ids = async (q = '') => {
      const res = await ctx.json('GET', `/api/saved/inbox${q}`, { token: session })
      expect(res.status).toBe(200)
      return res.body.items.map((i: any) => i.id)
    }
    expect(await ids()).toEqual([a.id, b.id, c.id])
    expect(await ids('?workflow_status=pending')).toEqual([a.id, b.id])
    expect(await ids('?workflow_status=done')).toEqual([c.id])
    expect(await ids('?requested_action=save')).toEqual([b.id])
    expect(await ids('?type=event')).toEqual([a.id])
    expect(await ids('?destination_kind=list')).toEqual([b.id])
    expect(await ids('?destination_name=Family')).toEqual([a.id])
    expect(await ids('?tag=kids')).toEqual([a.id, c.id])
    expect(await ids('?tags=kids,school')).toEqual([a.id])
    expect(
      await ids('?tag=kids&workflow_status=pending&type=event&requested_action=calendar'),
    ).toEqual([a.id])
    for (const q of [
      '?workflow_status=archived',
      '?requested_action=email',
      '?claim_status=taken',
      '?limit=0',
      '?limit=201',
      '?cursor=zzz',
    ]) {
      const res = await ctx.json('GET', `/api/saved/inbox${q}`, { token: session })
      expect({ q, status: res.status }).toEqual({ q, status: 400 })
      expectEnvelope(res.body, 'invalid_request')
    }
  })

  test('claim_status as each of two agents sees it', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const one = await agentToken(ctx, session, undefined, 'one')
    const two = await agentToken(ctx, session, undefined, 'two')
    const free = await createItem(ctx, session, { requested_action: 'workflow' })
    const held = await createItem(ctx, session, { requested_action: 'workflow' })
    const lapsed = await createItem(ctx, session, { requested_action: 'workflow' })
    await ctx.request('PATCH', `/api/saved/items/${held.id}`, {
      token: one.token,
      body: { claim_action: 'claim' },
    })
    await ctx.request('PATCH', `/api/saved/items/${lapsed.id}`, {
      token: one.token,
      body: { claim_action: 'claim', lease_seconds: 1 },
    })
    ctx.clock.advance(1100)
    const view = async (token: string, status: string) =>
      (await ctx.json('GET', `/api/saved/inbox?claim_status=${status}`, { token })).body.items.map(
        (i: any) => i.id,
      )
    expect(await view(one.token, 'mine')).toEqual([held.id])
    expect(await view(two.token, 'mine')).toEqual([])
    expect(await view(one.token, 'claimed')).toEqual([])
    expect(await view(two.token, 'claimed')).toEqual([held.id])
    expect(await view(one.token, 'available')).toEqual([free.id, lapsed.id])
    expect(await view(two.token, 'available')).toEqual([free.id, lapsed.id])
    expect(await view(two.token, 'all')).toEqual([free.id, held.id, lapsed.id])
    const seen = (await ctx.json('GET', '/api/saved/inbox', { token: two.token })).body.items
    expect(seen.map((i: any) => i.claim_status)).toEqual(['available', 'claimed', 'available'])
  })

  test('pages through the queue with the same cursor as items, and renders Markdown', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const made: string[] = []
    for (let i = 0; i < 7; i++)
      made.push(
        (await createItem(ctx, session, { requested_action: 'save', title: `Job ${i}` })).id,
      )
    expect(await walkPages(ctx, session, '/api/saved/inbox?limit=3')).toEqual(made)
    const md = await ctx.request('GET', '/api/saved/inbox?format=md&limit=2', { token: session })
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    const text = await md.text()
    expect(text).toStartWith('# Inbox')
    expect(text).toContain('## Job 0')
    expect(text).toContain('Next cursor:')
  })
})
