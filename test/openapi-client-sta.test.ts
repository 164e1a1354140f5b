import { describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { generateApi } from 'swagger-typescript-api'
import { typecheckAgent } from './typecheck'
import { agentToken, createItem, sessionToken, setup } from './helpers'

/**
 * A second generator (issue 14): swagger-typescript-api turns the served document into a fetch
 * client with one method per operation id. An agent drains its work with claim next and done
 * — typed, no casts — and the program runs against the real app.
 */
const AGENT = `
import { Api, type ClaimNextResult, type Item } from './Api'

export async function runAgent(options: { token: string; fetch: typeof fetch }) {
  const client = new Api({ baseUrl: 'http://localhost', customFetch: options.fetch, baseApiParams: { headers: { Authorization: \`Bearer \${options.token}\` } } })
  const done: Item[] = []
  for (;;) {
    const next: ClaimNextResult = (await client.api.claimNextItem({ lease_seconds: 120, requested_action: 'calendar' })).data
    if (!next.item || !next.lease) break
    const leaseId: string = next.lease.id
    const finished = await client.api.updateItem(next.item.id, { workflow_status: 'done', lease_id: leaseId, resolution_note: 'booked' })
    done.push(finished.data)
  }
  const inbox = await client.api.listInbox({ claim_status: 'claimable', limit: 10 })
  return { done, left: inbox.data.items.map((item) => item.id), next: inbox.data.next_cursor }
}

// Each line below must be a type error: the document is precise.
export async function refused(client: Api<unknown>) {
  // @ts-expect-error lease_seconds is an integer
  await client.api.claimNextItem({ lease_seconds: '60' })
  // @ts-expect-error claim_action is claim, release or revoke
  await client.api.updateItem('x', { claim_action: 'grab' })
}
`

describe('a second generator: swagger-typescript-api', () => {
  test('its client drains the inbox through claim next and done, typed end to end', async () => {
    const ctx = await setup()
    const session = await sessionToken('alice')
    const agent = await agentToken(ctx, session)
    const wanted = [
      await createItem(ctx, session, { requested_action: 'calendar', title: 'Dentist' }),
      await createItem(ctx, session, { requested_action: 'calendar', title: 'Concert' }),
    ]
    const other = await createItem(ctx, session, { requested_action: 'reminder' })
    const spec = await (await ctx.request('GET', '/openapi/json')).json()
    const dir = resolve(`.client-check-sta-${process.pid}-${Date.now()}`)
    try {
      mkdirSync(dir)
      const generated = await generateApi({
        spec,
        output: false,
        httpClientType: 'fetch',
        silent: true,
      } as never)
      for (const file of generated.files)
        writeFileSync(join(dir, `${file.fileName}${file.fileExtension}`), file.fileContent)
      writeFileSync(join(dir, 'agent.ts'), AGENT)
      expect(await typecheckAgent(dir)).toEqual({ exit: 0, output: '' })

      const { runAgent } = await import(join(dir, 'agent.ts'))
      const result = await runAgent({
        token: agent.token,
        fetch: ((input: RequestInfo, init?: RequestInit) =>
          ctx.app.handle(new Request(input, init))) as typeof fetch,
      })
      expect(result.done.map((i: { id: string }) => i.id).sort()).toEqual(
        wanted.map((i) => i.id).sort(),
      )
      expect(
        result.done.every((i: { workflow_status: string }) => i.workflow_status === 'done'),
      ).toBe(true)
      expect(result.left).toEqual([other.id])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
