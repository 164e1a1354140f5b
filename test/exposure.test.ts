import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setup, sessionToken, createItem, expectEnvelope, JWT_SECRET } from './helpers'
import { startServer } from './server'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const INTROSPECTION = '{ __schema { queryType { name } } }'

describe('a signed-in subscription operation (issue 15 row 9)', () => {
  test('is a clean validation error on every transport, and the server logs no error and no stack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-sub-'))
    dirs.push(dir)
    const { proc, base, output } = await startServer({
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/s.db`,
      JWT_SECRET,
    })
    procs.push(proc)
    const session = await sessionToken('alice')
    for (const [extra, accept] of [
      [{}, 'application/json'],
      [{ extensions: {} }, 'application/json'],
      [{}, 'text/event-stream'],
    ] as const) {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: 'subscription { __typename }', ...extra }),
      })
      const text = await res.text()
      // The schema has a subscription root now (itemChanged); a root __typename is refused by validation.
      expect(text).toContain('must not select an introspection top level field')
      expect(text).toContain('GRAPHQL_VALIDATION_FAILED')
      expect(text).not.toContain('INTERNAL_SERVER_ERROR')
    }
    await Bun.sleep(200)
    const lines = output().trim().split('\n')
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
    expect(lines.filter((l) => l.includes('"level":"error"'))).toEqual([])
  })
})

describe('introspection, GraphiQL, token names, Markdown links (issue 15 row 14)', () => {
  test('introspection and GraphiQL are on in development, off in production, and each has its own switch', async () => {
    const session = await sessionToken('alice')
    const graphiql = (ctx: Awaited<ReturnType<typeof setup>>) =>
      ctx.request('GET', '/graphql', { headers: { accept: 'text/html' } })
    const introspect = async (ctx: Awaited<ReturnType<typeof setup>>) =>
      (await ctx.json('POST', '/graphql', { token: session, body: { query: INTROSPECTION } })).body

    const dev = await setup()
    expect((await introspect(dev)).data.__schema.queryType.name).toBe('Query')
    expect((await graphiql(dev)).headers.get('content-type')).toContain('text/html')

    const prod = await setup({ NODE_ENV: 'production' })
    const refused = await introspect(prod)
    expect(refused.data ?? null).toBeNull()
    expect(refused.errors[0].message).toContain('introspection')
    const page = await graphiql(prod)
    expect(page.headers.get('content-type')).not.toContain('text/html')
    // __typename is not introspection of the schema and stays available.
    expect(
      (await prod.json('POST', '/graphql', { token: session, body: { query: '{ __typename }' } }))
        .body,
    ).toEqual({ data: { __typename: 'Query' } })

    const opened = await setup({
      NODE_ENV: 'production',
      GRAPHQL_INTROSPECTION: 'true',
      GRAPHIQL: 'true',
    })
    expect((await introspect(opened)).data.__schema.queryType.name).toBe('Query')
    expect((await graphiql(opened)).headers.get('content-type')).toContain('text/html')
    const closed = await setup({ GRAPHQL_INTROSPECTION: 'false', GRAPHIQL: 'off' })
    expect((await introspect(closed)).errors).toBeArray()
    expect((await graphiql(closed)).headers.get('content-type')).not.toContain('text/html')
  })

  test('token names with NUL, control characters, ANSI escapes or bidi overrides are 400 over REST and GraphQL', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const names = [
      'bad\u0000name',
      'tab\tname',
      '\u001b[31mred\u001b[0m',
      'evil\u202Etxt.exe',
      'iso\u2066late\u2069',
      'c1\u0085',
    ]
    for (const name of names) {
      const rest = await ctx.json('POST', '/api/saved/agent-tokens', {
        token: session,
        body: { name, scopes: ['read_items'] },
      })
      expect(rest.status).toBe(400)
      expectEnvelope(rest.body, 'invalid_request')
      const gql = await ctx.json('POST', '/graphql', {
        token: session,
        body: {
          query:
            'mutation($name: String!) { createAgentToken(input: { name: $name, scopes: [READ_ITEMS] }) { token } }',
          variables: { name },
        },
      })
      expect(gql.body.errors[0].extensions.code).toBe('BAD_USER_INPUT')
      expect(gql.body.data ?? null).toBeNull()
    }
    expect(
      (await ctx.json('GET', '/api/saved/agent-tokens', { token: session })).body.tokens,
    ).toHaveLength(0)
    // Ordinary Unicode is fine.
    expect(
      (
        await ctx.json('POST', '/api/saved/agent-tokens', {
          token: session,
          body: { name: 'Agent – Zoë 🤖', scopes: ['read_items'] },
        })
      ).status,
    ).toBe(200)
  })

  test('Markdown output does not autolink bare URLs, www. hosts or e-mail addresses in user text', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const item = await createItem(ctx, session, {
      title: 'Pay at https://evil.example/pay or www.evil.example',
      summary: 'mail me: victim@evil.example',
    })
    const md = await (
      await ctx.request('GET', `/api/saved/items/${item.id}?format=md`, { token: session })
    ).text()
    expect(md).not.toContain('https://evil')
    expect(md).not.toContain('www.evil')
    expect(md).not.toMatch(/[^\\]@evil/)
    expect(md).toContain('https\\://evil.example/pay')
  })
})
