import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { JWT_SECRET, sessionToken } from './helpers'
import { startServer } from './server'

// The MCP endpoint from the outside: real server processes on a real libSQL file, real JWTs and
// agent tokens made through REST, and the SDK's own client, which validates every structured
// result against the tool's output schema (a mismatch throws, failing the test).

interface Servers {
  bases: string[]
  /** A REST call with a bearer token against the first server. */
  rest(
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; res: Response }>
}

/** `count` server processes on one fresh database file; always torn down. */
async function withServers(
  count: number,
  run: (s: Servers) => Promise<void>,
  env: Record<string, string> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'saved-mcp-'))
  const procs: { kill(signal?: number): void }[] = []
  try {
    const bases: string[] = []
    for (let i = 0; i < count; i++) {
      const server = await startServer({
        DATA_DIR: dir,
        DATABASE_URL: `file:${dir}/mcp.db`,
        JWT_SECRET,
        ...env,
      })
      procs.push(server.proc)
      bases.push(server.base)
    }
    const rest: Servers['rest'] = async (method, path, token, body) => {
      const res = await fetch(bases[0] + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await res.text()
      return { status: res.status, body: text ? JSON.parse(text) : null, res }
    }
    await run({ bases, rest })
  } finally {
    for (const proc of procs) proc.kill(9)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** An SDK client on `/mcp` with the bearer header; `fetch` lets a test choose the server per request. */
async function mcpClient(base: string, token: string, fetchImpl?: typeof fetch) {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: fetchImpl,
  })
  await client.connect(transport)
  // The client validates structured results only for tools it has listed.
  const { tools } = await client.listTools()
  return { client, tools }
}

async function agentToken(s: Servers, session: string, scopes: string[], name = 'agent') {
  const { status, body } = await s.rest('POST', '/api/saved/agent-tokens', session, {
    name,
    scopes,
  })
  expect(status).toBe(200)
  return body.token as string
}

async function createItems(
  s: Servers,
  session: string,
  count: number,
  fields: Record<string, unknown> = {},
) {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const { status, body } = await s.rest('POST', '/api/saved/items', session, {
      type: 'event',
      title: `Item ${i}`,
      requested_action: 'workflow',
      ...fields,
    })
    expect(status).toBe(201)
    ids.push(body.id)
  }
  return ids
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult & { structuredContent: any }>

const refusalCode = (result: CallToolResult & { structuredContent: any }) => {
  expect(result.isError).toBe(true)
  expect(typeof result.structuredContent.error.message).toBe('string')
  return result.structuredContent.error.code as string
}

/** Checks a result against the listed output schema ourselves too, as a third-party client would. */
function matchesOutputSchema(tools: Tool[], name: string, result: CallToolResult) {
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats(ajv)
  const schema = tools.find((t) => t.name === name)!.outputSchema!
  const valid = ajv.validate(schema, result.structuredContent)
  if (!valid) throw new Error(`${name}: ${ajv.errorsText()}`)
  return valid
}

const WRITE_TOOLS = ['claim_next', 'lease_renew', 'lease_release', 'item_complete', 'item_add_note']
const READ_TOOLS = ['whoami', 'inbox_list', 'item_get']

describe('MCP over Streamable HTTP', () => {
  test('tools are listed per scope, each with schemas and annotations; every tool answers and refuses with codes', async () => {
    await withServers(1, async (s) => {
      const session = await sessionToken('mcp-alice')
      const readOnly = await agentToken(s, session, ['read_items'], 'reader')
      const worker = await agentToken(
        s,
        session,
        ['read_items', 'update_workflow_status'],
        'worker',
      )
      const [first, second] = await createItems(s, session, 2, {
        tags: ['mcp'],
        action_note: 'file it',
      })
      await createItems(s, session, 1, { requested_action: 'calendar' })

      // A read-only token sees only the read tools.
      const reader = await mcpClient(s.bases[0]!, readOnly)
      expect(reader.tools.map((t) => t.name).sort()).toEqual([...READ_TOOLS].sort())
      const full = await mcpClient(s.bases[0]!, worker)
      expect(full.tools.map((t) => t.name).sort()).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort())
      for (const tool of full.tools) {
        expect(tool.inputSchema.type).toBe('object')
        expect(tool.outputSchema?.type).toBe('object')
        expect(typeof tool.annotations?.readOnlyHint).toBe('boolean')
        expect(typeof tool.annotations?.destructiveHint).toBe('boolean')
        expect(typeof tool.annotations?.idempotentHint).toBe('boolean')
        expect(tool.annotations?.readOnlyHint).toBe(READ_TOOLS.includes(tool.name))
      }

      // The read-only token calling a write tool anyway: insufficient_scope, as data.
      const denied = await call(reader.client, 'claim_next')
      expect(refusalCode(denied)).toBe('insufficient_scope')
      expect(matchesOutputSchema(full.tools, 'claim_next', denied)).toBe(true)

      const c = full.client
      const me = await call(c, 'whoami')
      expect(me.isError).toBeFalsy()
      expect(me.structuredContent.caller).toMatchObject({
        kind: 'agent_token',
        name: 'worker',
        user_id: 'mcp-alice',
      })
      expect(me.structuredContent.scopes).toEqual(['read_items', 'update_workflow_status'])
      expect(me.structuredContent.lease_limits.max_lease_seconds).toBe(86400)
      expect(me.content[0]).toMatchObject({ type: 'text' })

      // inbox_list: filters, small pages, the cursor as data.
      const page1 = await call(c, 'inbox_list', { requested_action: 'workflow', limit: 1 })
      expect(page1.structuredContent.items.map((i: any) => i.id)).toEqual([first])
      expect(page1.structuredContent.next_cursor).toBeString()
      expect((page1.content[0] as any).text).toContain(
        `next_cursor: ${page1.structuredContent.next_cursor}`,
      )
      const page2 = await call(c, 'inbox_list', {
        requested_action: 'workflow',
        limit: 1,
        cursor: page1.structuredContent.next_cursor,
      })
      expect(page2.structuredContent.items.map((i: any) => i.id)).toEqual([second])
      expect((await call(c, 'inbox_list', { tags: ['mcp'] })).structuredContent.items).toHaveLength(
        2,
      )
      expect((await call(c, 'inbox_list')).structuredContent.items).toHaveLength(3)
      expect(refusalCode(await call(c, 'inbox_list', { limit: 51 }))).toBe('invalid_request')
      expect(refusalCode(await call(c, 'inbox_list', { cursor: 'nope!' }))).toBe('invalid_request')
      const badEnum = await call(c, 'inbox_list', { claim_status: 'sideways' })
      expect(refusalCode(badEnum)).toBe('invalid_request')
      expect(badEnum.structuredContent.error.message).toBe(
        'claim_status: Expected one of all, available, claimed, mine, claimable, stuck.',
      )
      expect(matchesOutputSchema(full.tools, 'inbox_list', badEnum)).toBe(true)
      // Ranges are the domain's rule, said in REST's words.
      const badLease = await call(c, 'claim_next', { lease_seconds: 0 })
      expect(badLease.structuredContent.error).toMatchObject({
        code: 'invalid_request',
        message: 'lease_seconds must be a whole number from 1 to 86400.',
      })
      expect(refusalCode(await call(c, 'inbox_list', { surprise: 1 }))).toBe('invalid_request')

      // claim_next → renew → note → release → claim again → complete.
      const claimed = await call(c, 'claim_next', {
        requested_action: 'workflow',
        lease_seconds: 60,
      })
      expect(claimed.isError).toBeFalsy()
      expect(claimed.structuredContent.item).toMatchObject({
        id: first,
        claim_status: 'mine',
        attempts: 1,
      })
      const lease = claimed.structuredContent.lease
      expect(lease).toMatchObject({ attempt: 1 })
      expect(claimed.structuredContent.item.lease_id).toBe(lease.id)
      expect(matchesOutputSchema(full.tools, 'claim_next', claimed)).toBe(true)

      const renewed = await call(c, 'lease_renew', {
        item_id: first,
        lease_id: lease.id,
        lease_seconds: 600,
      })
      expect(renewed.structuredContent.lease.id).toBe(lease.id)
      expect(Date.parse(renewed.structuredContent.lease.expires_at)).toBeGreaterThan(
        Date.parse(lease.expires_at),
      )
      expect(
        refusalCode(
          await call(c, 'lease_renew', { item_id: first, lease_id: lease.id, lease_seconds: 0 }),
        ),
      ).toBe('invalid_request')
      expect(
        refusalCode(await call(c, 'lease_renew', { item_id: first, lease_id: lease.id })),
      ).toBe('invalid_request')

      const noted = await call(c, 'item_add_note', {
        item_id: first,
        note: 'halfway',
        lease_id: lease.id,
      })
      expect(noted.structuredContent.item.resolution_note).toBe('halfway')

      const released = await call(c, 'lease_release', {
        item_id: first,
        lease_id: lease.id,
        retry_after_seconds: 3600,
      })
      expect(released.structuredContent.item).toMatchObject({
        claim_status: 'available',
        lease_id: null,
      })
      expect(released.structuredContent.item.available_at).toBeString()
      // The delayed item is passed over: the next claim is the second item.
      const next = await call(c, 'claim_next', { requested_action: 'workflow' })
      expect(next.structuredContent.item.id).toBe(second)
      // Nothing else of that action is claimable now: item and lease are null, not an error.
      const empty = await call(c, 'claim_next', { requested_action: 'workflow' })
      expect(empty.isError).toBeFalsy()
      expect(empty.structuredContent).toEqual({ item: null, lease: null })

      const done = await call(c, 'item_complete', {
        item_id: second,
        lease_id: next.structuredContent.lease.id,
        resolution_note: 'filed',
      })
      expect(done.structuredContent.item).toMatchObject({
        workflow_status: 'done',
        resolution_note: 'filed',
        claim_status: 'available',
      })
      expect(refusalCode(await call(c, 'item_complete', { item_id: second }))).toBe(
        'invalid_transition',
      )

      // item_get, with history on request.
      const got = await call(c, 'item_get', { id: second, history: true })
      expect(got.structuredContent.item).toMatchObject({ id: second, workflow_status: 'done' })
      expect('source_image_url' in got.structuredContent.item).toBe(true)
      expect(got.structuredContent.history.map((e: any) => e.action)).toEqual([
        'claim',
        'done',
        'note',
      ])
      expect('history' in (await call(c, 'item_get', { id: second })).structuredContent).toBe(false)
      const missing = await call(c, 'item_get', { id: 'itm_unknown' })
      expect(refusalCode(missing)).toBe('not_found')
      expect(matchesOutputSchema(full.tools, 'item_get', missing)).toBe(true)

      // Another user's item answers like an unknown one.
      const other = await sessionToken('mcp-bob')
      const [bobs] = await createItems(s, other, 1)
      expect(refusalCode(await call(c, 'item_get', { id: bobs }))).toBe('not_found')
      expect(refusalCode(await call(c, 'item_complete', { item_id: bobs }))).toBe('not_found')

      // A claim held by someone else: claim_conflict.
      const rival = await mcpClient(
        s.bases[0]!,
        await agentToken(s, session, ['read_items', 'update_workflow_status'], 'rival'),
      )
      const held = await call(rival.client, 'claim_next', { requested_action: 'calendar' })
      expect(held.structuredContent.item).not.toBeNull()
      expect(
        refusalCode(
          await call(c, 'item_add_note', {
            item_id: held.structuredContent.item.id,
            note: 'mine?',
          }),
        ),
      ).toBe('claim_conflict')

      // idempotency_key: the retry replays the first result and claims nothing more.
      const [extra] = await createItems(s, session, 1, { requested_action: 'reminder' })
      const once = await call(c, 'claim_next', {
        requested_action: 'reminder',
        idempotency_key: 'claim-1',
      })
      const again = await call(c, 'claim_next', {
        requested_action: 'reminder',
        idempotency_key: 'claim-1',
      })
      expect(once.structuredContent.item.id).toBe(extra)
      expect(again.structuredContent).toEqual(once.structuredContent)
      expect(again._meta?.idempotent_replayed).toBe(true)
      expect(
        refusalCode(
          await call(c, 'claim_next', { requested_action: 'save', idempotency_key: 'claim-1' }),
        ),
      ).toBe('idempotency_key_reused')
      const completeArgs = {
        item_id: extra,
        lease_id: once.structuredContent.lease.id,
        idempotency_key: 'done-1',
      }
      const completed = await call(c, 'item_complete', completeArgs)
      expect(completed.isError).toBeFalsy()
      expect((await call(c, 'item_complete', completeArgs)).structuredContent).toEqual(
        completed.structuredContent,
      )
      const history = await s.rest('GET', `/api/saved/items/${extra}/history`, session)
      expect(history.body.events.map((e: any) => e.action)).toEqual(['claim', 'done'])

      // Unknown tools are a protocol error, as MCP specifies.
      await expect(call(c, 'no_such_tool')).rejects.toThrow(/Unknown tool/)

      // The prompt and the resource template.
      const prompts = await c.listPrompts()
      expect(prompts.prompts.map((p) => p.name)).toContain('work_inbox')
      const prompt = await c.getPrompt({ name: 'work_inbox' })
      expect((prompt.messages[0]!.content as any).text).toContain('claim_next')
      const templates = await c.listResourceTemplates()
      expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['saved-item://{id}'])
      const resource = await c.readResource({ uri: `saved-item://${first}` })
      expect(JSON.parse((resource.contents[0] as any).text)).toMatchObject({
        id: first,
        title: 'Item 0',
      })
      await expect(c.readResource({ uri: `saved-item://${bobs}` })).rejects.toThrow()

      for (const client of [reader.client, full.client, rival.client]) await client.close()
    })
  }, 60_000)

  test('four MCP clients drain 200 items through claim_next + item_complete: each done exactly once', async () => {
    await withServers(1, async (s) => {
      const session = await sessionToken('mcp-drain')
      const ids = await createItems(s, session, 200)
      const clients = await Promise.all(
        [0, 1, 2, 3].map(
          async (i) =>
            (
              await mcpClient(
                s.bases[0]!,
                await agentToken(s, session, ['read_items', 'update_workflow_status'], `w${i}`),
              )
            ).client,
        ),
      )
      const doneBy = await Promise.all(
        clients.map(async (client) => {
          const mine: string[] = []
          for (;;) {
            const claimed = await call(client, 'claim_next', { lease_seconds: 120 })
            expect(claimed.isError).toBeFalsy()
            if (!claimed.structuredContent.item) return mine
            const { item, lease } = claimed.structuredContent
            const done = await call(client, 'item_complete', {
              item_id: item.id,
              lease_id: lease.id,
              resolution_note: 'ok',
            })
            expect(done.isError).toBeFalsy()
            mine.push(item.id)
          }
        }),
      )
      const all = doneBy.flat()
      expect(all).toHaveLength(200)
      expect(new Set(all).size).toBe(200)
      expect(new Set(all)).toEqual(new Set(ids))
      // Work was shared, not done by one client alone.
      expect(doneBy.filter((list) => list.length > 0).length).toBeGreaterThan(1)
      // The database's own record: one claim and one done per item (then the note), nothing pending.
      const pending = await s.rest(
        'GET',
        '/api/saved/inbox?workflow_status=pending&limit=10',
        session,
      )
      expect(pending.body.items).toHaveLength(0)
      const histories = await Promise.all(
        ids.map((id) => s.rest('GET', `/api/saved/items/${id}/history`, session)),
      )
      for (const history of histories)
        expect(history.body.events.map((e: any) => e.action)).toEqual(['claim', 'done', 'note'])
      for (const client of clients) await client.close()
    })
  }, 90_000)

  test('one client, its requests spread over two server processes: stateless', async () => {
    await withServers(2, async (s) => {
      const session = await sessionToken('mcp-spread')
      const token = await agentToken(s, session, ['read_items', 'update_workflow_status'])
      const [id] = await createItems(s, session, 1)
      // Every request of the client goes to the other process than the one before.
      const hits = [0, 0]
      let turn = 0
      const alternate = ((input: string | URL | Request, init?: RequestInit) => {
        const server = turn++ % 2
        hits[server]!++
        const url = new URL(input instanceof Request ? input.url : String(input))
        return fetch(s.bases[server]! + url.pathname + url.search, init)
      }) as typeof fetch
      const { client, tools } = await mcpClient(s.bases[0]!, token, alternate)
      expect(tools).toHaveLength(8)
      const claimed = await call(client, 'claim_next')
      expect(claimed.structuredContent.item.id).toBe(id)
      const renewed = await call(client, 'lease_renew', {
        item_id: id,
        lease_id: claimed.structuredContent.lease.id,
        lease_seconds: 300,
      })
      expect(renewed.isError).toBeFalsy()
      const done = await call(client, 'item_complete', {
        item_id: id,
        lease_id: claimed.structuredContent.lease.id,
      })
      expect(done.structuredContent.item.workflow_status).toBe('done')
      expect(hits[0]).toBeGreaterThanOrEqual(2)
      expect(hits[1]).toBeGreaterThanOrEqual(2)
      await client.close()
    })
  }, 60_000)

  test('fencing: a stale lease_id gets lease_lost after the owner revokes and another agent re-claims', async () => {
    await withServers(1, async (s) => {
      const session = await sessionToken('mcp-fence')
      const [id] = await createItems(s, session, 1)
      const slow = (
        await mcpClient(
          s.bases[0]!,
          await agentToken(s, session, ['read_items', 'update_workflow_status'], 'slow'),
        )
      ).client
      const fast = (
        await mcpClient(
          s.bases[0]!,
          await agentToken(s, session, ['read_items', 'update_workflow_status'], 'fast'),
        )
      ).client

      const first = await call(slow, 'claim_next')
      const staleLease = first.structuredContent.lease.id
      expect(
        (await s.rest('PATCH', `/api/saved/items/${id}`, session, { claim_action: 'revoke' }))
          .status,
      ).toBe(200)
      const second = await call(fast, 'claim_next')
      expect(second.structuredContent.item.id).toBe(id)
      expect(second.structuredContent.lease.id).not.toBe(staleLease)

      for (const [tool, args] of [
        ['lease_renew', { lease_seconds: 60 }],
        ['item_add_note', { note: 'still mine?' }],
        ['lease_release', {}],
        ['item_complete', { resolution_note: 'late' }],
      ] as const) {
        const result = await call(slow, tool, { item_id: id, lease_id: staleLease, ...args })
        expect(refusalCode(result)).toBe('lease_lost')
      }
      // The new holder's lease is untouched and finishes the work.
      const done = await call(fast, 'item_complete', {
        item_id: id,
        lease_id: second.structuredContent.lease.id,
      })
      expect(done.structuredContent.item.workflow_status).toBe('done')
      const history = await s.rest('GET', `/api/saved/items/${id}/history`, session)
      expect(history.body.events.map((e: any) => e.action)).toEqual([
        'claim',
        'revoke',
        'claim',
        'done',
      ])
      await slow.close()
      await fast.close()
    })
  }, 60_000)

  test('401 with a Bearer challenge pointing at RFC 9728 metadata; GET is 405', async () => {
    await withServers(
      1,
      async (s) => {
        const base = s.bases[0]!
        const init = {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        }
        const anonymous = await fetch(`${base}/mcp`, init)
        expect(anonymous.status).toBe(401)
        const challenge = anonymous.headers.get('www-authenticate')!
        expect(challenge).toStartWith('Bearer ')
        expect(challenge).toContain(
          `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        )
        expect(((await anonymous.json()) as any).error.code).toBe('unauthorized')

        const forged = await fetch(`${base}/mcp`, {
          ...init,
          headers: { ...init.headers, authorization: 'Bearer sat_forged' },
        })
        expect(forged.status).toBe(401)
        expect(forged.headers.get('www-authenticate')).toContain('error="invalid_token"')

        // The SDK client surfaces the 401 too.
        await expect(mcpClient(base, 'not-a-token')).rejects.toThrow()

        const metadata: any = await (
          await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)
        ).json()
        expect(metadata).toMatchObject({
          resource: `${base}/mcp`,
          bearer_methods_supported: ['header'],
        })
        expect(metadata.scopes_supported).toEqual(['read_items', 'update_workflow_status'])

        const session = await sessionToken('mcp-get')
        const get = await fetch(`${base}/mcp`, {
          headers: { authorization: `Bearer ${session}`, accept: 'text/event-stream' },
        })
        expect(get.status).toBe(405)

        // A signed-in session works too, with every tool; JSON answers unless SSE is asked for first.
        const listed = await fetch(`${base}/mcp`, {
          ...init,
          headers: { ...init.headers, authorization: `Bearer ${session}` },
        })
        expect(listed.status).toBe(200)
        expect(listed.headers.get('content-type')).toContain('application/json')
        expect(((await listed.json()) as any).result.tools).toHaveLength(8)
        const streamed = await fetch(`${base}/mcp`, {
          ...init,
          headers: {
            ...init.headers,
            authorization: `Bearer ${session}`,
            accept: 'text/event-stream, application/json',
          },
        })
        expect(streamed.headers.get('content-type')).toContain('text/event-stream')
        const events = await streamed.text()
        expect(events).toContain('"tools"')

        // A browser client on an allowed origin may send MCP's header and read the challenge.
        const preflight = await fetch(`${base}/mcp`, {
          method: 'OPTIONS',
          headers: {
            origin: 'https://agent.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
          },
        })
        expect(preflight.headers.get('access-control-allow-headers')).toContain(
          'mcp-protocol-version',
        )
        const fromBrowser = await fetch(`${base}/mcp`, {
          ...init,
          headers: { ...init.headers, origin: 'https://agent.example' },
        })
        expect(fromBrowser.headers.get('access-control-expose-headers')).toContain(
          'www-authenticate',
        )

        // Bodies are bounded here too, and only read once the caller is known.
        const huge = JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/list',
          params: { pad: 'x'.repeat(2 * 1024 * 1024) },
        })
        const tooLarge = await fetch(`${base}/mcp`, {
          ...init,
          body: huge,
          headers: { ...init.headers, authorization: `Bearer ${session}` },
        })
        expect(tooLarge.status).toBe(413)
        expect((await fetch(`${base}/mcp`, { ...init, body: huge })).status).toBe(401)
      },
      { CORS_ORIGINS: 'https://agent.example' },
    )
  }, 60_000)

  test("MCP requests draw from the caller's rate limit: headers, then 429 with Retry-After", async () => {
    await withServers(
      1,
      async (s) => {
        const session = await sessionToken('mcp-limited')
        const list = () =>
          fetch(`${s.bases[0]}/mcp`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${session}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          })
        const first = await list()
        expect(first.status).toBe(200)
        expect(first.headers.get('ratelimit-limit')).toBe('3')
        expect(first.headers.get('ratelimit-remaining')).toBe('2')
        await list()
        await list()
        const refused = await list()
        expect(refused.status).toBe(429)
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
        expect(((await refused.json()) as any).error.code).toBe('rate_limited')
      },
      { RATE_LIMIT_PER_MINUTE: '3' },
    )
  }, 60_000)

  test('claim_next with wait_seconds answers as soon as work arrives', async () => {
    await withServers(1, async (s) => {
      const session = await sessionToken('mcp-wait')
      const { client } = await mcpClient(
        s.bases[0]!,
        await agentToken(s, session, ['read_items', 'update_workflow_status']),
      )
      const started = Date.now()
      const waiting = call(client, 'claim_next', { wait_seconds: 20 })
      await Bun.sleep(300)
      const [id] = await createItems(s, session, 1)
      const claimed = await waiting
      expect(claimed.structuredContent.item.id).toBe(id)
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(refusalCode(await call(client, 'claim_next', { wait_seconds: 61 }))).toBe(
        'invalid_request',
      )
      await client.close()
    })
  }, 60_000)

  test('a client that goes away ends its claim_next wait at once', async () => {
    await withServers(
      1,
      async (s) => {
        const session = await sessionToken('mcp-gone')
        const token = await agentToken(s, session, ['read_items', 'update_workflow_status'])
        const waitCall = (signal?: AbortSignal) =>
          fetch(`${s.bases[0]}/mcp`, {
            method: 'POST',
            signal,
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'claim_next', arguments: { wait_seconds: 30 } },
            }),
          })
        // Two waits fill this caller's allowance (MAX_WAITING_CLAIMS_PER_CALLER=2); both clients leave.
        const leaving = [new AbortController(), new AbortController()]
        const pending = leaving.map((c) => waitCall(c.signal).catch(() => null))
        await Bun.sleep(400)
        for (const c of leaving) c.abort()
        await Promise.all(pending)
        await Bun.sleep(200)
        // Had the waits outlived their clients, this one would be refused as rate_limited for 30 s.
        const { client } = await mcpClient(s.bases[0]!, token)
        const after = await call(client, 'claim_next', { wait_seconds: 1 })
        expect(after.isError).toBeFalsy()
        expect(after.structuredContent).toEqual({ item: null, lease: null })
        await client.close()
      },
      { MAX_WAITING_CLAIMS_PER_CALLER: '2' },
    )
  }, 60_000)
})
