import { describe, expect, test } from 'bun:test'
import { agentToken, createItem, sessionToken, setup } from './helpers'

// REST lists read the stored document (items.doc, rendered by triggers) and splice in the
// caller's claim view; the single fetch builds the item from its columns. Both must agree,
// field for field, for every caller and every state an item can be in.
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
  })
})
