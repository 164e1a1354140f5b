import { expect, test } from 'bun:test'
import { setup, sessionToken } from './helpers'
import { seedItems } from '../scripts/seed'

test('the demo seed covers every type, status, requested action and destination, and lists correctly', async () => {
  const ctx = await setup()
  await seedItems(ctx.db, { userId: 'demo', count: 50 })
  const distinct = async (column: string) =>
    (
      await ctx.db.$client.execute(
        `SELECT DISTINCT ${column} AS v FROM items WHERE ${column} IS NOT NULL`,
      )
    ).rows.map((r) => r.v)
  expect((await distinct('type')).sort()).toEqual(['event', 'media', 'reference'])
  expect((await distinct('requested_action')).sort()).toEqual([
    'calendar',
    'reminder',
    'save',
    'workflow',
  ])
  expect((await distinct('workflow_status')).sort()).toEqual(['done', 'pending'])
  expect((await distinct('status')).length).toBeGreaterThan(1)
  expect((await distinct('destination_kind')).length).toBeGreaterThan(2)
  const session = await sessionToken('demo')
  const page = await ctx.json('GET', '/api/saved/items?limit=200', { token: session })
  expect(page.body.items).toHaveLength(50)
  const tag = page.body.items[0].tags[0]
  const byTag = await ctx.json('GET', `/api/saved/items?tag=${tag}&limit=200`, { token: session })
  expect(byTag.body.items.length).toBe(
    page.body.items.filter((i: any) => i.tags.includes(tag)).length,
  )
})
