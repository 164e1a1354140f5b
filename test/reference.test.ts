import { describe, expect, test } from 'bun:test'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { setup, sessionToken, createItem } from './helpers'

describe('the API reference, the document and GraphiQL are served by the app itself', () => {
  test('GET / leads to the reference, which loads only same-origin scripts', async () => {
    const ctx = await setup()
    const root = await ctx.request('GET', '/')
    expect(root.status).toBe(302)
    expect(root.headers.get('location')).toBe('/openapi')

    const page = await ctx.request('GET', '/openapi')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const html = await page.text()
    const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]!)
    expect(scripts).toHaveLength(1)
    // No CDN: the bundle comes from this server, with the pinned version in its path.
    expect(scripts[0]).toMatch(/^\/openapi\/scalar-\d+\.\d+\.\d+\.js$/)
    expect(html).not.toMatch(/https?:\/\//)
    expect(html).toContain('"url":"/openapi/json"')
    // Without JavaScript the page still lists every operation.
    for (const path of [
      '/api/saved/items',
      '/api/saved/inbox',
      '/api/saved/agent-tokens',
      '/api/saved/items/{id}/history',
      '/graphql',
    ]) {
      expect(html).toContain(`<code>${path}</code>`)
    }

    const script = await ctx.request('GET', scripts[0]!)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('javascript')
    expect(script.headers.get('cache-control')).toContain('immutable')
    expect(await script.text()).toContain('createApiReference')
    expect((await ctx.request('GET', '/openapi/scalar-0.0.0.js')).status).toBe(404)
  })

  test('the raw generator document is not a second public document', async () => {
    const ctx = await setup()
    const res = await ctx.json('GET', '/openapi/generated.json')
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('not_found')
  })

  test('big pages are compressed per Accept-Encoding and revalidated with their ETag', async () => {
    const ctx = await setup()
    const html = { accept: 'text/html' }
    const plain = await ctx.request('GET', '/graphql', { headers: html })
    const plainBytes = new Uint8Array(await plain.arrayBuffer())
    expect(plain.headers.get('content-encoding')).toBeNull()
    expect(plain.headers.get('vary')).toContain('Accept-Encoding')

    const br = await ctx.request('GET', '/graphql', {
      headers: { ...html, 'accept-encoding': 'gzip, deflate, br' },
    })
    expect(br.headers.get('content-encoding')).toBe('br')
    const brBytes = new Uint8Array(await br.arrayBuffer())
    expect(brBytes.byteLength).toBeLessThan(plainBytes.byteLength / 3)
    expect(brotliDecompressSync(brBytes)).toEqual(Buffer.from(plainBytes))

    const gz = await ctx.request('GET', '/graphql', {
      headers: { ...html, 'accept-encoding': 'gzip' },
    })
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(new Uint8Array(await gz.arrayBuffer()))).toEqual(Buffer.from(plainBytes))

    const etag = br.headers.get('etag')!
    expect(etag).toMatch(/^".+"$/)
    const again = await ctx.request('GET', '/graphql', {
      headers: { ...html, 'accept-encoding': 'br', 'if-none-match': etag },
    })
    expect(again.status).toBe(304)
    expect((await again.arrayBuffer()).byteLength).toBe(0)
    // A tag of another encoding names the same content.
    const other = await ctx.request('GET', '/graphql', {
      headers: { ...html, 'if-none-match': gz.headers.get('etag')! },
    })
    expect(other.status).toBe(304)
    const stale = await ctx.request('GET', '/graphql', {
      headers: { ...html, 'if-none-match': '"stale"' },
    })
    expect(stale.status).toBe(200)

    const doc = await ctx.request('GET', '/openapi/json', {
      headers: { 'accept-encoding': 'gzip' },
    })
    expect(doc.headers.get('content-encoding')).toBe('gzip')
    expect(doc.headers.get('etag')).toBeTruthy()
    // app.handle hands back the bytes as sent; a browser or fetch() would decompress them.
    expect(
      JSON.parse(gunzipSync(new Uint8Array(await doc.arrayBuffer())).toString()).openapi,
    ).toMatch(/^3\.1/)
  })

  test('GraphiQL asks for the bearer token before its schema fetch and shows where it goes', async () => {
    const ctx = await setup()
    const html = await (
      await ctx.request('GET', '/graphql', { headers: { accept: 'text/html' } })
    ).text()
    expect(html).toContain('id="token-form"')
    expect(html).toContain('Authorization: Bearer &lt;token&gt;')
    expect(html).toContain('npm run token -- &lt;user-id&gt;')
    expect(html).not.toMatch(/<script[^>]*\bsrc=/)
  })

  test('Accept: text/markdown is the same as format=md; JSON stays the default', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const item = await createItem(ctx, session, { requested_action: 'calendar', title: 'Dentist' })
    for (const path of ['/api/saved/items', `/api/saved/items/${item.id}`, '/api/saved/inbox']) {
      const md = await ctx.request('GET', path, {
        token: session,
        headers: { accept: 'text/markdown' },
      })
      expect({ path, type: md.headers.get('content-type'), vary: md.headers.get('vary') }).toEqual({
        path,
        type: 'text/markdown; charset=utf-8',
        vary: 'Accept',
      })
      expect(await md.text()).toContain('Dentist')
      const json = await ctx.request('GET', path, {
        token: session,
        headers: { accept: 'application/json, text/markdown;q=0.5' },
      })
      expect({ path, type: json.headers.get('content-type') }).toEqual({
        path,
        type: 'application/json;charset=utf-8',
      })
      const any = await ctx.request('GET', path, { token: session, headers: { accept: '*/*' } })
      expect({ path, type: any.headers.get('content-type') }).toEqual({
        path,
        type: 'application/json;charset=utf-8',
      })
    }
    // An explicit format wins over the header.
    const explicit = await ctx.request('GET', '/api/saved/inbox?format=json', {
      token: session,
      headers: { accept: 'text/markdown' },
    })
    expect(explicit.headers.get('content-type')).toBe('application/json;charset=utf-8')
  })
})
