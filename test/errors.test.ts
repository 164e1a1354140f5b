import { describe, expect, test } from 'bun:test'
import { setup, sessionToken, expectEnvelope } from './helpers'

describe('the error envelope everywhere (CONTRACT 5)', () => {
  test('unknown routes and methods are 404 not_found', async () => {
    const ctx = await setup()
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/api/saved/unknown'],
      ['PUT', '/api/saved/items'],
      ['GET', '/api/other/items'],
    ]) {
      const res = await ctx.json(method!, path!)
      expect(res.status).toBe(404)
      expectEnvelope(res.body, 'not_found')
    }
  })

  test('a JSON body over 1 MiB is 413, also without a content-length', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), scopes: ['read_items'] })
    const res = await ctx.json('POST', '/api/saved/agent-tokens', {
      token: session,
      body: big,
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(413)
    expectEnvelope(res.body, 'payload_too_large')
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big))
        c.close()
      },
    })
    const chunked = await ctx.app.handle(
      new Request('http://localhost/api/saved/agent-tokens', {
        method: 'POST',
        body: stream,
        headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      }),
    )
    expect(chunked.status).toBe(413)
  })

  test('invalid UTF-8 and malformed JSON are 400', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    for (const body of [new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), '{"name": "x",', '']) {
      const res = await ctx.app.handle(
        new Request('http://localhost/api/saved/agent-tokens', {
          method: 'POST',
          body,
          headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
        }),
      )
      expect(res.status).toBe(400)
      expectEnvelope(await res.json(), 'invalid_request')
    }
  })

  test('a failure inside is a bare 500: no stack, no SQL', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    await ctx.request('GET', '/api/saved/items', { token: session })
    await ctx.db.$client.execute('DROP TABLE items')
    const res = await ctx.json('GET', '/api/saved/items', { token: session })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({
      error: { code: 'internal', message: 'Something went wrong on our side.' },
    })
  })

  test('health and readiness need no token', async () => {
    const ctx = await setup()
    expect((await ctx.json('GET', '/health')).body).toEqual({ status: 'ok' })
    expect((await ctx.json('GET', '/ready')).body).toEqual({ status: 'ready' })
  })
})
