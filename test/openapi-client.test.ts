import { describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript-ts5'
import { typecheckAgent } from './typecheck'
import { setup, sessionToken, agentToken, createItem } from './helpers'

/**
 * What an agent author does: generate types from the served document with openapi-typescript,
 * write a small agent against openapi-fetch, type-check it with no casts, and run it.
 */
const AGENT = `
import createClient from 'openapi-fetch'
import type { components, paths } from './api'

type Item = components['schemas']['Item']

export async function runAgent(options: { token: string; fetch: (request: Request) => Promise<Response> }) {
  const client = createClient<paths>({ baseUrl: 'http://localhost', headers: { Authorization: \`Bearer \${options.token}\` }, fetch: options.fetch })

  const inbox = await client.GET('/api/saved/inbox', { params: { query: { claim_status: 'available', workflow_status: 'pending', limit: 10 } } })
  if (inbox.error) throw new Error(inbox.error.error.message)
  const id: string = inbox.data.items[0].id
  const cursor: string | null = inbox.data.next_cursor

  const claimed = await client.PATCH('/api/saved/items/{id}', { params: { path: { id } }, body: { claim_action: 'claim', lease_seconds: 600 } })
  if (claimed.error) throw new Error(\`\${claimed.error.error.code}: \${claimed.error.error.message}\`)
  const mine: Item['claim_status'] = claimed.data.claim_status
  const leaseExpires: string | null = claimed.data.lease_expires_at

  const done = await client.PATCH('/api/saved/items/{id}', { params: { path: { id } }, body: { workflow_status: 'done', resolution_note: 'Added to the calendar.' } })
  if (done.error) throw new Error(done.error.error.code)
  const finished: Item = done.data

  const history = await client.GET('/api/saved/items/{id}/history', { params: { path: { id } } })
  const actions: string[] = (history.data?.events ?? []).map((event) => event.action)

  const conflict = await client.PATCH('/api/saved/items/{id}', { params: { path: { id } }, body: { workflow_status: 'done' } })
  const code: components['schemas']['Error']['error']['code'] | undefined = conflict.error?.error.code
  const remaining: number | undefined = conflict.response.status === 409 ? Number(conflict.response.headers.get('RateLimit-Remaining')) : undefined

  return { id, cursor, mine, leaseExpires, finished, actions, code, remaining }
}

// Precise types refuse what the server refuses: each line below must be a type error.
export async function refused(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error lease_seconds is an integer, not a string
  await client.PATCH('/api/saved/items/{id}', { params: { path: { id: 'x' } }, body: { claim_action: 'claim', lease_seconds: '60' } })
  // @ts-expect-error claim_action is claim or release
  await client.PATCH('/api/saved/items/{id}', { params: { path: { id: 'x' } }, body: { claim_action: 'grab' } })
  // @ts-expect-error limit is a number
  await client.GET('/api/saved/inbox', { params: { query: { limit: '10' } } })
  const { data } = await client.GET('/api/saved/items')
  // @ts-expect-error a 200 answer is the JSON page, never a Markdown string
  const text: string = data!
  // GraphQL variables take any values.
  await client.POST('/graphql', { body: { query: 'query($id: ID!) { item(id: $id) { id } }', variables: { id: 'x', first: 10, nested: { ok: true } } } })
  return text
}
`

describe('a client generated from the served OpenAPI document', () => {
  test('openapi-typescript + openapi-fetch: an agent lists the inbox, claims and finishes an item, with no casts', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const item = await createItem(ctx, session, {
      requested_action: 'calendar',
      title: 'Dentist on Friday',
    })
    await createItem(ctx, session, { title: 'Not in the inbox' })

    const spec = await (await ctx.request('GET', '/openapi/json')).json()
    // Inside the repository so the program resolves openapi-fetch from node_modules.
    const dir = resolve(`.client-check-${process.pid}-${Date.now()}`)
    try {
      mkdirSync(dir)
      writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(spec)))
      writeFileSync(join(dir, 'agent.ts'), AGENT)
      expect(await typecheckAgent(dir)).toEqual({ exit: 0, output: '' })

      // And the typed program works against the real app.
      const { runAgent } = await import(join(dir, 'agent.ts'))
      const result = await runAgent({
        token: agent.token,
        fetch: (request: Request) => ctx.app.handle(request),
      })
      expect(result.id).toBe(item.id)
      expect(result.mine).toBe('mine')
      expect(result.finished.workflow_status).toBe('done')
      expect(result.finished.claim_status).toBe('available')
      expect(result.actions).toEqual(['claim', 'done', 'note'])
      expect(result.code).toBe('invalid_transition')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
