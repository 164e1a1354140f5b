import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { signTagRowsSql, tagSignatureSql } from '../src/domain/tag-signature'
import { createItem, sessionToken, setup } from './helpers'

// Several tags: the first tag's index is walked and the item's tag signature rules out, inside
// the index, items that cannot hold the others. A signature can only say "maybe": whatever it
// holds (or if it is missing), the answer must be exactly the items holding every tag.
describe('tag signatures', () => {
  test('migration 0011 signs old rows with the same expression the writes use', () => {
    const migration = readFileSync('drizzle/migrations/0011_tag_signature_backfill.sql', 'utf8')
    expect(migration).toContain(`${signTagRowsSql};`)
  })

  test('multi-tag filters answer exactly the items holding every tag, signed or not', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    const pool = ['a', 'b', 'music', 'weekend', 'ü', '🎉', 'x'.repeat(64), 'topic-12', 'topic-22']
    let seed = 7
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
    const items: { id: string; tags: string[] }[] = []
    for (let i = 0; i < 60; i++) {
      const tags = pool.filter(() => random() < 0.35)
      const item = await createItem(ctx, session, { tags })
      items.push({ id: item.id, tags })
    }
    // A correction rewrites an item's tag rows: they are signed again.
    const corrected = items[0]!
    corrected.tags = ['music', 'weekend', 'b']
    await ctx.json('PATCH', `/api/saved/items/${corrected.id}`, {
      token: session,
      body: { corrections: { tags: corrected.tags } },
    })
    const expected = (wanted: string[]) =>
      items
        .filter((i) => wanted.every((t) => i.tags.includes(t)))
        .map((i) => i.id)
        .reverse()
    const listed = async (wanted: string[]) => {
      const path = `/api/saved/items?limit=200&tags=${wanted.map(encodeURIComponent).join(',')}`
      return (await ctx.json('GET', path, { token: session })).body.items.map((i: any) => i.id)
    }
    const filters = pool.flatMap((a) => pool.filter((b) => b !== a).map((b) => [a, b]))
    filters.push(['music', 'weekend', 'b'], ['a', 'ü', '🎉'], ['topic-12', 'topic-22'])
    for (const wanted of filters) expect(await listed(wanted)).toEqual(expected(wanted))

    // Written by the API: every row signed, and exactly as the backfill would sign it.
    const signed = async () =>
      (
        await ctx.db.$client.execute(
          'SELECT item_id, tag, tags_signature FROM item_tags ORDER BY item_id, tag',
        )
      ).rows.map((r) => [r.item_id, r.tag, r.tags_signature])
    const written = await signed()
    expect(written.every(([, , s]) => typeof s === 'number' && s > 0)).toBe(true)
    await ctx.db.$client.execute(signTagRowsSql)
    expect(await signed()).toEqual(written)

    // Rows without a signature (as before the backfill) are checked exactly instead.
    await ctx.db.$client.execute(
      "UPDATE item_tags SET tags_signature = NULL WHERE tag IN ('a', 'music', 'topic-12')",
    )
    for (const wanted of filters) expect(await listed(wanted)).toEqual(expected(wanted))

    // The signature does rule items out: different tags usually get different bits.
    const bits = await ctx.db.$client.execute(
      `SELECT ${tagSignatureSql(`'["music"]'`)} m, ${tagSignatureSql(`'["weekend"]'`)} w`,
    )
    expect(bits.rows[0]?.m).not.toBe(bits.rows[0]?.w)
  })

  test('a tag with a lone surrogate is refused, so no tag is stored that a filter cannot find', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    for (const tags of [['a\ud800'], ['\udc00b'], ['ok', 'x\ud83d']]) {
      const res = await ctx.json('POST', '/api/saved/items', {
        token: session,
        body: { type: 'event', tags },
      })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
    }
    // A whole surrogate pair (an emoji) is a character like any other.
    const ok = await createItem(ctx, session, { tags: ['🎉'] })
    const found = await ctx.json('GET', `/api/saved/items?tag=${encodeURIComponent('🎉')}`, {
      token: session,
    })
    expect(found.body.items.map((i: any) => i.id)).toEqual([ok.id])
    expect((await ctx.db.$client.execute('SELECT count(*) n FROM items')).rows[0]?.n).toBe(1)
  })

  test('tag counts follow every write, and the rarest tag drives the walk', async () => {
    const ctx = await setup({ RATE_LIMIT_PER_MINUTE: '0' })
    const session = await sessionToken('alice')
    const other = await sessionToken('bob')
    const ids: string[] = []
    for (let i = 0; i < 30; i++)
      ids.push(
        (await createItem(ctx, session, { tags: i % 15 ? ['common'] : ['common', 'rare'] })).id,
      )
    await createItem(ctx, other, { tags: ['rare'] })
    const counts = async () =>
      (
        await ctx.db.$client.execute('SELECT user_id, tag, items FROM tag_counts ORDER BY 1, 2')
      ).rows.map((r) => [r.user_id, r.tag, r.items])
    const truth = async () =>
      (
        await ctx.db.$client.execute(
          'SELECT user_id, tag, count(*) FROM item_tags GROUP BY user_id, tag ORDER BY 1, 2',
        )
      ).rows.map((r) => Object.values(r))
    expect(await counts()).toEqual([
      ['alice', 'common', 30],
      ['alice', 'rare', 2],
      ['bob', 'rare', 1],
    ])
    // A correction moves an item between tags; a deletion removes it; a count at zero goes.
    await ctx.json('PATCH', `/api/saved/items/${ids[0]}`, {
      token: session,
      body: { corrections: { tags: ['solo'] } },
    })
    expect(
      (await ctx.request('DELETE', `/api/saved/items/${ids[15]}`, { token: session })).status,
    ).toBe(204)
    expect(await counts()).toEqual(await truth())
    expect(await counts()).toEqual([
      ['alice', 'common', 28],
      ['alice', 'solo', 1],
      ['bob', 'rare', 1],
    ])
    // Whatever the order of the filter's tags, and with a tag nobody holds, the answer is exact.
    const listed = async (q: string) =>
      (await ctx.json('GET', `/api/saved/items?limit=200&${q}`, { token: session })).body.items
        .length
    await ctx.json('PATCH', `/api/saved/items/${ids[3]}`, {
      token: session,
      body: { corrections: { tags: ['common', 'rare'] } },
    })
    expect(await listed('tags=common,rare')).toBe(1)
    expect(await listed('tags=rare,common')).toBe(1)
    expect(await listed('tags=common,nothing')).toBe(0)
    expect(await listed('tag=common&tags=solo')).toBe(0)
    // The backfill of migration 0013 counts the same.
    await ctx.db.$client.execute('DELETE FROM tag_counts')
    const migration = readFileSync('drizzle/migrations/0013_tag_count_triggers.sql', 'utf8')
    await ctx.db.$client.execute(
      migration.slice(migration.indexOf('INSERT INTO `tag_counts` (`user_id`, `tag`, `items`)\n')),
    )
    expect(await counts()).toEqual(await truth())
  })
})
