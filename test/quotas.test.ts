import { describe, expect, test } from 'bun:test'
import { expectEnvelope, sessionToken, setup } from './helpers'

const PNG: Uint8Array<ArrayBuffer> = new Uint8Array([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...new Array(1000).fill(7),
])

const upload = (bytes: Uint8Array<ArrayBuffer>) => {
  const form = new FormData()
  form.set('type', 'media')
  form.set('image', new File([bytes], 'x.png', { type: 'image/png' }))
  return form
}

describe('quotas per user (CONTRACT 10)', () => {
  test('MAX_ITEMS_PER_USER: concurrent creations cannot pass the last place; deleting frees it', async () => {
    const ctx = await setup({ MAX_ITEMS_PER_USER: '5', RATE_LIMIT_PER_MINUTE: '0' })
    const alice = await sessionToken('alice')
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        ctx.json('POST', '/api/saved/items', { token: alice, body: { type: 'event' } }),
      ),
    )
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5)
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused.status).toBe(403)
      expectEnvelope(refused.body, 'quota_exceeded')
    }
    expect(
      Number(
        (await ctx.db.$query("SELECT count(*) AS n FROM items WHERE user_id = 'alice'"))[0]!.n,
      ),
    ).toBe(5)
    // Another user has a quota of their own.
    expect(
      (
        await ctx.json('POST', '/api/saved/items', {
          token: await sessionToken('bob'),
          body: { type: 'event' },
        })
      ).status,
    ).toBe(201)
    const one = answers.find((a) => a.status === 201)!.body.id
    expect((await ctx.request('DELETE', `/api/saved/items/${one}`, { token: alice })).status).toBe(
      204,
    )
    expect(
      (await ctx.json('POST', '/api/saved/items', { token: alice, body: { type: 'event' } }))
        .status,
    ).toBe(201)
  })

  test('MAX_IMAGE_BYTES_PER_USER: two uploads at once cannot both take the last bytes; the refused image is not kept', async () => {
    const ctx = await setup({
      MAX_IMAGE_BYTES_PER_USER: String(PNG.byteLength * 3),
      RATE_LIMIT_PER_MINUTE: '0',
    })
    const alice = await sessionToken('alice')
    expect(
      (await ctx.json('POST', '/api/saved/items', { token: alice, body: upload(PNG) })).status,
    ).toBe(201)
    expect(
      (await ctx.json('POST', '/api/saved/items', { token: alice, body: upload(PNG) })).status,
    ).toBe(201)
    const racing = await Promise.all(
      [1, 2, 3].map(() =>
        ctx.json('POST', '/api/saved/items', { token: alice, body: upload(PNG) }),
      ),
    )
    expect(racing.map((r) => r.status).sort()).toEqual([201, 403, 403])
    expectEnvelope(racing.find((r) => r.status === 403)!.body, 'quota_exceeded')
    const files = [...new Bun.Glob('*').scanSync(`${ctx.dir}/images`)]
    expect(files).toHaveLength(3)
    // Items without images still fit.
    expect(
      (await ctx.json('POST', '/api/saved/items', { token: alice, body: { type: 'event' } }))
        .status,
    ).toBe(201)
  })
})
