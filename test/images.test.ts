import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, agentToken, expectEnvelope } from './helpers'

// A real 1×1 PNG.
const PNG = Uint8Array.from(
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  ),
)

function form(
  fields: Record<string, string | string[]>,
  image?: { bytes: Uint8Array; name: string; type: string },
) {
  const f = new FormData()
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) f.append(k, one)
  if (image)
    f.append(
      'image',
      new File([image.bytes as Uint8Array<ArrayBuffer>], image.name, { type: image.type }),
    )
  return f
}

describe('images: upload, signed links, rejections', () => {
  test('multipart upload round trip: the signed link returns the same bytes without a bearer token', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const res = await ctx.json('POST', '/api/saved/items', {
      token: session,
      body: form(
        { type: 'reference', title: 'Receipt', tags: ['tax', 'home'] },
        { bytes: PNG, name: 'r.png', type: 'image/png' },
      ),
    })
    expect(res.status).toBe(201)
    expect(res.body.tags).toEqual(['tax', 'home'])
    expect(res.body.source_image_url).toStartWith('http://localhost:3000/files/images/')

    const agent = await agentToken(ctx, session, ['read_items'])
    const fetched = await ctx.json('GET', `/api/saved/items/${res.body.id}`, { token: agent.token })
    const url = new URL(fetched.body.source_image_url)
    // Signed for 15 minutes by default.
    const lifetime = Number(url.searchParams.get('expires')) - Date.now() / 1000
    expect(lifetime).toBeGreaterThan(895)
    expect(lifetime).toBeLessThanOrEqual(900)
    const image = await ctx.app.handle(new Request(url))
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe('image/png')
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(PNG)
    // The Markdown of the single fetch links the image.
    const md = await (
      await ctx.request('GET', `/api/saved/items/${res.body.id}?format=md`, { token: agent.token })
    ).text()
    expect(md).toContain('- **image:** <http://localhost:3000/files/images/')
    // The list does not carry image links; only the single fetch does.
    const list = await ctx.json('GET', '/api/saved/items', { token: session })
    expect(list.body.items[0].source_image_url).toBeUndefined()
  })

  test('a tampered or expired link is 403', async () => {
    const ctx = await setup({ SIGNED_URL_TTL_SECONDS: '1' })
    const session = await sessionToken('alice')
    const { body } = await ctx.json('POST', '/api/saved/items', {
      token: session,
      body: form({ type: 'media' }, { bytes: PNG, name: 'x.png', type: 'image/png' }),
    })
    const url = new URL(body.source_image_url)
    const sig = url.searchParams.get('signature')!
    const variants = [
      (() => {
        const u = new URL(url)
        u.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1))
        return u
      })(),
      (() => {
        const u = new URL(url)
        u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 1000))
        return u
      })(),
      (() => {
        const u = new URL(url)
        u.searchParams.delete('signature')
        return u
      })(),
      new URL(url.toString().replace('/files/images/itm_', '/files/images/itm_X')),
    ]
    for (const u of variants) {
      const res = await ctx.app.handle(new Request(u))
      expect(res.status).toBe(403)
      expectEnvelope(await res.json(), 'forbidden')
    }
    ctx.clock.advance(1100)
    const expired = await ctx.app.handle(new Request(url))
    expect(expired.status).toBe(403)
    expect((await expired.json()).error.message).toContain('expired')
  })

  test('wrong type (judged by bytes, not name) is 415; too large is 413; nothing is saved', async () => {
    const ctx = await setup({ MAX_UPLOAD_BYTES: '2048' })
    const session = await sessionToken('alice')
    const fake = await ctx.json('POST', '/api/saved/items', {
      token: session,
      body: form(
        { type: 'media' },
        { bytes: new TextEncoder().encode('<svg></svg>'), name: 'x.png', type: 'image/png' },
      ),
    })
    expect(fake.status).toBe(415)
    expectEnvelope(fake.body, 'unsupported_media_type')
    const big = new Uint8Array(4096)
    big.set(PNG)
    const large = await ctx.json('POST', '/api/saved/items', {
      token: session,
      body: form({ type: 'media' }, { bytes: big, name: 'x.png', type: 'image/png' }),
    })
    expect(large.status).toBe(413)
    expectEnvelope(large.body, 'payload_too_large')
    const text = await ctx.json('POST', '/api/saved/items', {
      token: session,
      body: 'type=media',
      headers: { 'content-type': 'text/plain' },
    })
    expect(text.status).toBe(415)
    expect((await ctx.json('GET', '/api/saved/items', { token: session })).body.items).toEqual([])
  })
})
