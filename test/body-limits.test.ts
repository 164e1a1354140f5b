import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setup, sessionToken, expectEnvelope, JWT_SECRET, type TestContext } from './helpers'
import { startServer } from './server'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const MiB = 1024 * 1024

/** A streamed (chunked, no Content-Length) body of `total` bytes that counts what the server pulled. */
function countedBody(total: number, first = '{"query":"') {
  const chunk = new Uint8Array(64 * 1024).fill(0x61)
  let sent = 0
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent >= total) return controller.close()
        const piece = sent === 0 ? new TextEncoder().encode(first) : chunk
        sent += piece.byteLength
        controller.enqueue(piece)
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, pulled: () => sent }
}

/** A body that sends a little and then never finishes. */
function stalledBody() {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"query":"'))
    },
  })
}

const post = (ctx: TestContext, path: string, body: BodyInit, headers: Record<string, string>) =>
  ctx.app.handle(new Request(`http://localhost${path}`, { method: 'POST', body, headers }))

describe('bodies: bounded, and never read before authentication (issue 15 row 1)', () => {
  test('an unauthenticated 5 MiB body to /graphql or a REST route is a 401 without being read', async () => {
    const ctx = await setup()
    for (const [path, type] of [
      ['/graphql', 'application/json'],
      ['/api/saved/items', 'application/json'],
      ['/api/saved/items', 'multipart/form-data; boundary=x'],
      ['/api/saved/agent-tokens', 'application/json'],
    ]) {
      for (const authorization of [undefined, 'Bearer sat_' + 'A'.repeat(43)]) {
        const body = countedBody(5 * MiB)
        const res = await post(ctx, path!, body.stream, {
          'content-type': type!,
          ...(authorization ? { authorization } : {}),
        })
        expect({ path, status: res.status }).toEqual({ path, status: 401 })
        expect(body.pulled()).toBeLessThan(256 * 1024)
      }
    }
  })

  test('signed in, a /graphql body over MAX_JSON_BODY_BYTES is 413, chunked or with Content-Length, and reading stops at the limit', async () => {
    const ctx = await setup({ MAX_JSON_BODY_BYTES: String(64 * 1024) })
    const session = await sessionToken('alice')
    const chunked = countedBody(5 * MiB)
    const res = await post(ctx, '/graphql', chunked.stream, {
      authorization: `Bearer ${session}`,
      'content-type': 'application/json',
    })
    expect(res.status).toBe(413)
    const body: any = await res.json()
    expect(body.errors[0].extensions).toEqual({
      code: 'BAD_USER_INPUT',
      reason: 'payload_too_large',
    })
    expect(chunked.pulled()).toBeLessThan(256 * 1024)
    const declared = JSON.stringify({
      query: `{ __typename }`,
      variables: { pad: 'x'.repeat(65 * 1024) },
    })
    expect(
      (
        await post(ctx, '/graphql', declared, {
          authorization: `Bearer ${session}`,
          'content-type': 'application/json',
        })
      ).status,
    ).toBe(413)
    // Under the limit still works.
    const ok = await post(ctx, '/graphql', JSON.stringify({ query: '{ __typename }' }), {
      authorization: `Bearer ${session}`,
      'content-type': 'application/json',
    })
    expect(await ok.json()).toEqual({ data: { __typename: 'Query' } })
  })

  test('a real server answers 401 to an unauthenticated request announcing 5 MiB before any of it is sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-body-'))
    dirs.push(dir)
    const { proc, port } = await startServer({
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/b.db`,
      JWT_SECRET,
    })
    procs.push(proc)
    for (const [path, type] of [
      ['/graphql', 'application/json'],
      ['/api/saved/items', 'multipart/form-data; boundary=x'],
    ]) {
      const answer = await new Promise<string>((resolve, reject) => {
        let data = ''
        void Bun.connect({
          hostname: '127.0.0.1',
          port,
          socket: {
            open: (s) =>
              void s.write(
                `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${5 * MiB}\r\n\r\n{`,
              ),
            data: (s, chunk) => {
              data += new TextDecoder().decode(chunk)
              if (data.includes('\r\n\r\n')) s.end(), resolve(data)
            },
            error: (_s, e) => reject(e),
          },
        })
        setTimeout(() => resolve(data), 3000)
      })
      expect(answer).toStartWith('HTTP/1.1 401')
    }
  })

  test('a real server cuts off a body trickled a byte at a time (slowloris) after BODY_TIMEOUT_SECONDS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-slow-'))
    dirs.push(dir)
    const { proc, port } = await startServer({
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/s.db`,
      JWT_SECRET,
      BODY_TIMEOUT_SECONDS: '1',
    })
    procs.push(proc)
    const session = await sessionToken('alice')
    const started = Date.now()
    let drip: ReturnType<typeof setInterval> | undefined
    const answer = await new Promise<string>((resolve, reject) => {
      let data = ''
      void Bun.connect({
        hostname: '127.0.0.1',
        port,
        socket: {
          open: (s) => {
            s.write(
              `POST /graphql HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${session}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
            )
            // One byte every 300 ms: never idle long enough for an idle timeout.
            drip = setInterval(() => s.write(' '), 300)
          },
          data: (s, chunk) => {
            data += new TextDecoder().decode(chunk)
            if (data.includes('\r\n\r\n')) s.end(), resolve(data)
          },
          close: () => resolve(data),
          error: (_s, e) => reject(e),
        },
      })
      setTimeout(() => resolve(data), 8000)
    })
    clearInterval(drip)
    expect(answer).toStartWith('HTTP/1.1 408')
    expect(Date.now() - started).toBeLessThan(4000)
  })

  test('a body that trickles in longer than BODY_TIMEOUT_SECONDS is refused with 408', async () => {
    const ctx = await setup({ BODY_TIMEOUT_SECONDS: '1' })
    const session = await sessionToken('alice')
    const started = Date.now()
    const [gql, rest] = await Promise.all([
      post(ctx, '/graphql', stalledBody(), {
        authorization: `Bearer ${session}`,
        'content-type': 'application/json',
      }),
      post(ctx, '/api/saved/agent-tokens', stalledBody(), {
        authorization: `Bearer ${session}`,
        'content-type': 'application/json',
      }),
    ])
    expect(gql.status).toBe(408)
    expect(rest.status).toBe(408)
    expectEnvelope(await rest.json(), 'request_timeout')
    expect(Date.now() - started).toBeLessThan(5000)
  })
})

describe('/graphql takes JSON only; secrets are not cached (issue 15 row 13)', () => {
  test('urlencoded, multipart, application/graphql and text/plain are 415 in GraphQL shape, and nothing is applied', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const mutation = 'mutation { createItem(input: { type: EVENT, title: "csrf" }) { id } }'
    const form = new FormData()
    form.append('query', mutation)
    const bodies: [BodyInit, Record<string, string>][] = [
      [
        new URLSearchParams({ query: mutation }).toString(),
        { 'content-type': 'application/x-www-form-urlencoded' },
      ],
      [form, {}],
      [mutation, { 'content-type': 'application/graphql' }],
      [JSON.stringify({ query: mutation }), { 'content-type': 'text/plain' }],
      [JSON.stringify({ query: mutation }), {}],
    ]
    for (const [body, headers] of bodies) {
      const res = await post(ctx, '/graphql', body, {
        authorization: `Bearer ${session}`,
        ...headers,
      })
      expect(res.status).toBe(415)
      const json: any = await res.json()
      expect(json.errors[0].message).toBeString()
      expect(json.errors[0].extensions.code).toBe('BAD_USER_INPUT')
      expect(json.errors[0].extensions.reason).toBe('unsupported_media_type')
    }
    const items = await ctx.json('GET', '/api/saved/items', { token: session })
    expect(items.body.items).toHaveLength(0)
    const json = await post(ctx, '/graphql', JSON.stringify({ query: mutation }), {
      authorization: `Bearer ${session}`,
      'content-type': 'application/json; charset=utf-8',
      accept: 'application/graphql-response+json',
    })
    expect(json.status).toBe(200)
  })

  test('agent-token creation answers carry Cache-Control: no-store, over REST and GraphQL', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const rest = await ctx.request('POST', '/api/saved/agent-tokens', {
      token: session,
      body: { name: 'n', scopes: ['read_items'] },
    })
    expect(rest.status).toBe(200)
    expect(rest.headers.get('cache-control')).toBe('no-store')
    const gql = await ctx.request('POST', '/graphql', {
      token: session,
      body: {
        query:
          'mutation { createAgentToken(input: { name: "g", scopes: [READ_ITEMS] }) { token } }',
      },
    })
    expect(((await gql.json()) as any).data.createAgentToken.token).toStartWith('sat_')
    expect(gql.headers.get('cache-control')).toBe('no-store')
  })
})
