import { describe, expect, test } from 'bun:test'
import { agentToken, createItem, sessionToken, setup } from './helpers'

// REST lists are rendered inside the database from the stored document (items.doc, written by
// triggers) with the caller's claim view put in its tail (src/domain/item-pages.ts); the single
// fetch builds the item from its columns. Both must agree, field for field, for every caller and
// every state an item can be in, and a rendered page must cut and resume exactly where a page of
// rows would.
describe('stored item documents', () => {
  test('list, inbox and single fetch agree for every caller, after every kind of change', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    const a = await agentToken(ctx, session, undefined, 'agent "a" ✓')
    const b = await agentToken(ctx, session, undefined, 'b')
    const tricky = 'Quote " backslash \\ tab \t newline \n emoji 🎉 bidi \u202e nul-free \u00e9'
    const items = [
      await createItem(ctx, session, {
        title: tricky,
        summary: 'x'.repeat(2000),
        tags: ['ü', 'a"b'],
        requested_action: 'workflow',
        destination_kind: 'list',
        destination_name: tricky,
      }),
      await createItem(ctx, session, { requested_action: 'calendar', action_note: 'call\r\nback' }),
      await createItem(ctx, session, { type: 'media' }),
    ]
    const patch = (token: string, id: string, body: unknown) =>
      ctx.json('PATCH', `/api/saved/items/${id}`, { token, body })
    const [one, two, three] = items.map((i) => i.id as string)
    const compare = async () => {
      for (const token of [session, a.token, b.token]) {
        const list = (await ctx.json('GET', '/api/saved/items?limit=200', { token })).body.items
        const inbox = (await ctx.json('GET', '/api/saved/inbox?limit=200', { token })).body.items
        for (const listed of [...list, ...inbox]) {
          const { source_image_url, ...single } = (
            await ctx.json('GET', `/api/saved/items/${listed.id}`, { token })
          ).body
          expect(listed).toEqual(single)
          expect(Object.keys(listed)).toEqual(Object.keys(single))
        }
      }
    }
    await compare()
    await patch(a.token, one!, { claim_action: 'claim', lease_seconds: 120 })
    await patch(b.token, two!, { claim_action: 'claim' })
    await patch(b.token, two!, { claim_action: 'release', retry_after_seconds: 30 })
    await patch(session, three!, { corrections: { title: 'Fixed "title"', tags: ['z'] } })
    await compare()
    await patch(a.token, one!, { workflow_status: 'done', resolution_note: tricky })
    await patch(session, two!, { claim_action: 'revoke' })
    ctx.clock.advance(1000)
    await patch(session, one!, { workflow_status: 'pending' })
    await compare()
    // A signed-in user's own claim, then every lease running out on the clock.
    await patch(session, two!, { claim_action: 'claim', lease_seconds: 60 })
    await patch(b.token, one!, { claim_action: 'claim', lease_seconds: 30 })
    await compare()
    ctx.clock.advance(61_000)
    await compare()
  })

  test('rendered pages cut, order and resume exactly like the full list, at every page size', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    const a = await agentToken(ctx, session)
    // Ties on created_at are broken by id: create several items within the same millisecond.
    const ids: string[] = []
    for (let i = 0; i < 13; i++) {
      const item = await createItem(ctx, session, {
        title: `item ${i} ,{"id":"fake"}`,
        tags: [i % 2 ? 'odd' : 'even', 'all', i % 4 ? 'q' : 'r'],
        requested_action: i % 3 ? 'workflow' : null,
      })
      ids.push(item.id)
    }
    // Some held by the agent, one by the user: live tails inside the page, at its end and cut off.
    for (const id of [ids[0], ids[5], ids[12]])
      await ctx.json('PATCH', `/api/saved/items/${id}`, {
        token: a.token,
        body: { claim_action: 'claim' },
      })
    await ctx.json('PATCH', `/api/saved/items/${ids[7]}`, {
      token: session,
      body: { claim_action: 'claim' },
    })
    for (const path of [
      '/api/saved/items?',
      '/api/saved/items?tags=all,odd&',
      '/api/saved/items?tag=q&tags=odd,all&',
      '/api/saved/items?tag=even&type=event&',
      '/api/saved/inbox?',
      '/api/saved/inbox?claim_status=available&',
    ]) {
      for (const token of [session, a.token]) {
        const whole = (await ctx.json('GET', `${path}limit=200`, { token })).body
        expect(whole.next_cursor).toBeNull()
        // The order itself: created_at, then id — newest first, the inbox oldest first.
        const keys = whole.items.map((i: any) => `${i.created_at} ${i.id}`)
        const sorted = [...keys].sort()
        expect(keys).toEqual(path.includes('inbox') ? sorted : sorted.reverse())
        for (const limit of [1, 2, 3, 5, whole.items.length, whole.items.length + 1]) {
          const pages: any[] = []
          let cursor: string | null = null
          do {
            const res: any = await ctx.json(
              'GET',
              `${path}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
              { token },
            )
            expect(res.status).toBe(200)
            expect(res.body.items.length).toBeLessThanOrEqual(limit)
            pages.push(res.body)
            cursor = res.body.next_cursor
          } while (cursor)
          // Every page but the last is full and says more follow; the last says none do.
          for (const page of pages.slice(0, -1)) expect(page.items.length).toBe(limit)
          expect(pages.flatMap((p) => p.items)).toEqual(whole.items)
        }
      }
    }
  })

  test('an item without its stored rendering is never silently left out of a page', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    for (let i = 0; i < 3; i++) await createItem(ctx, session, { title: `item ${i}` })
    await ctx.db.$client.execute("UPDATE items SET doc = NULL, gql = NULL WHERE title = 'item 1'")
    // REST renders from the documents: it refuses rather than answer two items of three.
    const rest = await ctx.json('GET', '/api/saved/items', { token: session })
    expect(rest.status).toBe(500)
    // GraphQL's executor reads the columns: the whole page, correctly.
    const gql = await ctx.json('POST', '/graphql', {
      token: session,
      body: { query: '{ items { edges { node { title } } } }' },
    })
    expect(gql.body.data.items.edges.map((e: any) => e.node.title)).toEqual([
      'item 2',
      'item 1',
      'item 0',
    ])
  })
})
