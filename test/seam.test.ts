import { describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { openDatabase } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { createLogger } from '../src/logger'
import {
  agentToken,
  createItem,
  JWT_SECRET,
  sessionToken,
  setup,
  type TestContext,
} from './helpers'

// One domain language: each front end spells the same rule its own way (issue 10).

const gql = async (ctx: TestContext, token: string | undefined, query: string) => {
  const res = await ctx.request('POST', '/graphql', { token, body: { query } })
  return { status: res.status, body: (await res.json()) as any }
}

describe('one rule, each front end its own spelling', () => {
  test('a lease of 0 seconds: REST names lease_seconds, GraphQL names leaseSeconds on the updateItem field', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const item = await createItem(ctx, session, { requested_action: 'workflow' })
    const rest = await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: session,
      body: { claim_action: 'claim', lease_seconds: 0 },
    })
    expect(rest.status).toBe(400)
    expect(rest.body.error.message).toBe('lease_seconds must be a whole number from 1 to 86400.')
    expect(rest.body.error.details.field).toBe('lease_seconds')
    const g = await gql(
      ctx,
      session,
      `mutation { updateItem(id: "${item.id}", input: { claimAction: CLAIM, leaseSeconds: 0 }) { id } }`,
    )
    expect(g.status).toBe(200)
    const [error] = g.body.errors
    expect(error.message).toBe('leaseSeconds must be a whole number from 1 to 86400.')
    expect(error.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'invalid_request',
      details: { field: 'leaseSeconds' },
    })
    expect(error.path).toEqual(['updateItem'])
    expect(error.locations).toEqual([{ line: 1, column: 12 }])
  })

  test('page size: REST says limit, GraphQL says first; the same range', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const rest = await ctx.json('GET', '/api/saved/items?limit=0', { token: session })
    expect(rest.status).toBe(400)
    expect(rest.body.error.message).toBe('limit must be a whole number from 1 to 200.')
    for (const query of [
      '{ items(first: 0) { edges { cursor } } }',
      '{ inbox(first: 201) { edges { cursor } } }',
    ]) {
      const g = await gql(ctx, session, query)
      expect(g.body.errors[0].message).toBe('first must be a whole number from 1 to 200.')
      expect(g.body.errors[0].extensions.details.field).toBe('first')
    }
  })

  test('a field refused to an agent token is an error on that field; the rest of the answer stands', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    await createItem(ctx, session)
    const g = await gql(
      ctx,
      agent.token,
      '{ items(first: 1) { edges { node { id } } } agentTokens { id } }',
    )
    expect(g.status).toBe(200)
    expect(g.body.data.items.edges).toHaveLength(1)
    expect(g.body.data.agentTokens).toBeNull()
    expect(g.body.errors).toHaveLength(1)
    expect(g.body.errors[0]).toMatchObject({
      path: ['agentTokens'],
      extensions: { code: 'UNAUTHENTICATED', reason: 'session_required' },
    })
    // Missing or invalid credentials still end the whole request with 401.
    expect((await gql(ctx, undefined, '{ items { edges { cursor } } }')).status).toBe(401)
  })

  test('a write-only token learns the workflow state it changed, never the contents', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const writer = await agentToken(ctx, session, ['update_workflow_status'])
    const item = await createItem(ctx, session, {
      title: 'Secret',
      summary: 'private',
      tags: ['x'],
      requested_action: 'workflow',
    })
    const rest = await ctx.json('PATCH', `/api/saved/items/${item.id}`, {
      token: writer.token,
      body: { claim_action: 'claim' },
    })
    expect(rest.status).toBe(200)
    expect(rest.body).toMatchObject({
      id: item.id,
      claim_status: 'mine',
      title: null,
      summary: null,
      tags: [],
    })
    const g = await gql(
      ctx,
      writer.token,
      `mutation { updateItem(id: "${item.id}", input: { workflowStatus: DONE }) { title tags workflowStatus } }`,
    )
    expect(g.body.data.updateItem).toEqual({ title: null, tags: [], workflowStatus: 'DONE' })
  })

  test('the request log records the status actually sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-seam-'))
    const lines: any[] = []
    const config = loadConfig({
      JWT_SECRET,
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/t.db`,
      MAX_UPLOAD_BYTES: '2048',
    })
    const db = await openDatabase(config.database)
    await migrateDatabase(db)
    const app = createApp({
      config,
      db,
      logger: createLogger('info', (l) => lines.push(JSON.parse(l))),
    })
    const session = await sessionToken('alice')
    const send = async (path: string, init: RequestInit = {}) =>
      (await app.handle(new Request(`http://localhost${path}`, init))).status
    const auth = { authorization: `Bearer ${session}` }
    const sent = [
      await send('/api/saved/items?limit=abc', { headers: auth }),
      await send('/api/saved/items', {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          'content-length': String(1024 * 1024),
        },
        body: 'x'.repeat(1024 * 1024),
      }),
      await send('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ items { edges { cursor } } }"}',
      }),
      await send('/graphql?query=mutation%7BdeleteItem(id%3A%22x%22)%7D', { headers: auth }),
      await send('/nowhere'),
    ]
    expect(sent).toEqual([400, 413, 401, 405, 404])
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.status)).toEqual(sent)
    db.$client.close()
  })
})
