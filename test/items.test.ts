import { encodeCursor } from '../src/domain/page'
import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, createItem, expectEnvelope, walkPages } from './helpers'

describe('items: create, list, filters, pagination', () => {
  test('creation validates and normalises; defaults per CONTRACT 2', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const item = await createItem(ctx, session, {
      type: 'media',
      title: 'Film',
      tags: [' a ', 'b', 'a', '', 'c'],
    })
    expect(item.id).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(item).toMatchObject({
      type: 'media',
      status: 'extracted',
      workflow_status: 'pending',
      tags: ['a', 'b', 'c'],
      requested_action: null,
      claim_status: 'available',
      source_image_url: null,
    })
    expect(item.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

    for (const body of [
      {},
      { type: 'movie' },
      { type: 'event', status: 'done' },
      { type: 'event', requested_action: 'email' },
      { type: 'event', title: 'x'.repeat(501) },
      { type: 'event', tags: 'a' },
      { type: 'event', tags: [1] },
      { type: 'event', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) },
      { type: 'event', id: 'mine' },
      { type: 'event', user_id: 'bob' },
    ]) {
      const res = await ctx.json('POST', '/api/saved/items', { token: session, body })
      expect({ body, status: res.status }).toEqual({ body, status: 400 })
      expectEnvelope(res.body, 'invalid_request')
    }
    expect((await ctx.json('GET', '/api/saved/items', { token: session })).body.items).toHaveLength(
      1,
    )
  })

  test('filters alone and combined; tag and tags combine with AND', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const a = await createItem(ctx, session, {
      type: 'event',
      tags: ['music', 'weekend'],
      status: 'extracted',
    })
    const b = await createItem(ctx, session, { type: 'media', tags: ['music'], status: 'failed' })
    const c = await createItem(ctx, session, {
      type: 'event',
      tags: ['weekend', 'family'],
      status: 'queued',
    })
    const ids = async (q: string) =>
      (await ctx.json('GET', `/api/saved/items${q}`, { token: session })).body.items.map(
        (i: any) => i.id,
      )
    expect(await ids('')).toEqual([c.id, b.id, a.id])
    expect(await ids('?type=event')).toEqual([c.id, a.id])
    expect(await ids('?status=failed')).toEqual([b.id])
    expect(await ids('?tag=music')).toEqual([b.id, a.id])
    expect(await ids('?tags=music,weekend')).toEqual([a.id])
    expect(await ids('?tag=weekend&tags=family')).toEqual([c.id])
    expect(await ids('?tag=music&type=media')).toEqual([b.id])
    expect(await ids('?tags=music,nothing')).toEqual([])
    expect(await ids('?tag=Music')).toEqual([])
  })

  test('limit edges: 1 and 200 work; 0, 201, words and fractions are 400', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    for (let i = 0; i < 3; i++) await createItem(ctx, session)
    expect(
      (await ctx.json('GET', '/api/saved/items?limit=1', { token: session })).body.items,
    ).toHaveLength(1)
    expect(
      (await ctx.json('GET', '/api/saved/items?limit=200', { token: session })).body.items,
    ).toHaveLength(3)
    for (const bad of ['0', '201', 'ten', '1.5', '-1', '']) {
      const res = await ctx.json('GET', `/api/saved/items?limit=${bad}`, { token: session })
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 })
      expectEnvelope(res.body, 'invalid_request')
    }
    for (const q of ['type=movie', 'status=done', 'format=html']) {
      expect((await ctx.json('GET', `/api/saved/items?${q}`, { token: session })).status).toBe(400)
    }
  })

  test('a cursor walk sees every item exactly once, also while new items arrive', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const created: string[] = []
    for (let i = 0; i < 23; i++)
      created.push((await createItem(ctx, session, { tags: ['walk'] })).id)
    for (const filter of ['', '&tag=walk']) {
      const seen = await walkPages(
        ctx,
        session,
        `/api/saved/items?limit=5${filter}`,
        async (page) => {
          if (page === 1)
            for (let i = 0; i < 4; i++) await createItem(ctx, session, { tags: ['walk'] })
        },
      )
      expect(new Set(seen).size).toBe(seen.length)
      for (const id of created) expect(seen).toContain(id)
    }
  })

  test('bad cursors are 400', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const good = Buffer.from('1700000000000:itm_x').toString('base64url')
    expect(
      (await ctx.json('GET', `/api/saved/items?cursor=${good}`, { token: session })).status,
    ).toBe(200)
    for (const bad of [
      'abc',
      'not a cursor',
      Buffer.from('x:y').toString('base64url'),
      Buffer.from('1:a b').toString('base64url'),
      '%00',
      'A'.repeat(300),
    ]) {
      const res = await ctx.json('GET', `/api/saved/items?cursor=${encodeURIComponent(bad)}`, {
        token: session,
      })
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 })
      expectEnvelope(res.body, 'invalid_request')
    }
  })

  test("users see only their own items; another user's id is the same 404 as an unknown one", async () => {
    const ctx = await setup()
    const alice = await sessionToken('alice')
    const bob = await sessionToken('bob')
    const item = await createItem(ctx, alice, { tags: ['secret'] })
    expect((await ctx.json('GET', '/api/saved/items', { token: bob })).body.items).toEqual([])
    expect(
      (await ctx.json('GET', '/api/saved/items?tag=secret', { token: bob })).body.items,
    ).toEqual([])
    const foreign = await ctx.json('GET', `/api/saved/items/${item.id}`, { token: bob })
    const unknown = await ctx.json('GET', '/api/saved/items/itm_unknown', { token: bob })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual(unknown.body)
    const bobAgent = await agentToken(ctx, bob)
    expect(
      (await ctx.json('GET', `/api/saved/items/${item.id}`, { token: bobAgent.token })).status,
    ).toBe(404)
  })

  test('format=md renders a readable document that user text cannot restructure', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const item = await createItem(ctx, session, {
      title: '# Injected\n- list',
      action_note: 'line one\n# not a heading',
      tags: ['a`b'],
      requested_action: 'calendar',
    })
    await createItem(ctx, session, { title: 'Second' })
    const res = await ctx.request('GET', '/api/saved/items?format=md&limit=1', { token: session })
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    const md = await res.text()
    expect(md).toStartWith('# Saved items')
    expect(md).toContain('## Second')
    expect(md).toContain('Next cursor: `')
    const single = await (
      await ctx.request(`GET`, `/api/saved/items/${item.id}?format=md`, { token: session })
    ).text()
    const headings = single.split('\n').filter((l) => l.startsWith('#'))
    expect(headings).toEqual(['# \\# Injected - list'])
    expect(single).toContain('> line one\n> \\# not a heading')
    expect(single).toContain(`\`${item.id}\``)
    expect(single).toContain('requested action:** calendar')
    // Every block marker at the start of user text is neutralised; ordinary punctuation stays readable.
    const { escapeInline } = await import('../src/http/markdown')
    expect(escapeInline('1. first')).toBe('1\\. first')
    expect(escapeInline('- item')).toBe('\\- item')
    expect(escapeInline('    indented')).toBe('indented')
    expect(escapeInline('<script>&amp;[x](y)')).toBe('\\<script\\>\\&amp;\\[x\\](y)')
    expect(escapeInline("Lunch (12.30) at Mo's.")).toBe("Lunch (12.30) at Mo's.")
  })

  test('the SQL the list, tag list and inbox actually send uses indexes (EXPLAIN QUERY PLAN)', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    // Record what the domain sends through the real read path, then ask SQLite how it runs it.
    const sent: { sql: string; args: any }[] = []
    const rows = ctx.db.$rows
    ctx.db.$rows = (sql, args) => (sent.push({ sql, args }), rows(sql, args))
    const planOf = async (path: string) => {
      sent.length = 0
      expect((await ctx.request('GET', path, { token: session })).status).toBe(200)
      expect(sent.length).toBe(1)
      const { sql, args } = sent[0]!
      return (await ctx.db.$client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args })).rows
        .map((r) => String(r.detail))
        .join(' | ')
    }
    const cursor = encodeCursor({ createdAt: Date.now(), id: 'itm_x' })
    const list = await planOf(`/api/saved/items?type=event&cursor=${cursor}`)
    expect(list).toContain('USING INDEX items_user_created')
    expect(list).not.toContain('TEMP B-TREE')
    // One tag, several, or tags with another filter: the first tag's index drives the walk in
    // keyset order (the others ruled out inside it by signature, then checked by key), no sort.
    for (const path of ['tag=a', 'tags=a,b', 'tags=a,b,c&type=event']) {
      const plan = await planOf(`/api/saved/items?${path}&cursor=${cursor}`)
      expect(plan).toContain(
        'SEARCH t USING COVERING INDEX item_tags_user_tag_created (user_id=? AND tag=? AND (created_at,item_id)<(?,?))',
      )
      // The only sort is of the filter's own tags by their counts, to pick the rarest, once.
      const sorts = plan.match(/TEMP B-TREE FOR ORDER BY/g) ?? []
      expect(sorts.length).toBe(path.startsWith('tags') ? 1 : 0)
      if (sorts.length)
        expect(plan).toContain(
          'tag_counts_1 (user_id=? AND tag=?) LEFT-JOIN | USE TEMP B-TREE FOR ORDER BY',
        )
      // The driving tag and the signature are computed once per query, not per row.
      expect(plan).not.toMatch(/CORRELATED SCALAR SUBQUERY [12] /)
      expect(plan).not.toMatch(/SCAN (items|t\b|item_tags)/)
    }
    const inbox = await planOf(
      `/api/saved/inbox?workflow_status=pending&claim_status=available&cursor=${cursor}`,
    )
    expect(inbox).toContain('USING INDEX items_inbox')
    expect(inbox).not.toContain('TEMP B-TREE')
    const claimable = await planOf(
      '/api/saved/inbox?workflow_status=pending&claim_status=claimable',
    )
    expect(claimable).toContain('USING INDEX items_inbox')
  })
})
