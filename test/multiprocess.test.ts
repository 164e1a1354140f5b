import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sessionToken, JWT_SECRET } from './helpers'
import { startServer } from './server'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('two server processes on one database file', () => {
  test('30 concurrent claims split across two processes: exactly one claimant wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-mp-'))
    dirs.push(dir)
    const env = { DATA_DIR: dir, DATABASE_URL: `file:${dir}/shared.db`, JWT_SECRET }
    const first = await startServer(env)
    procs.push(first.proc)
    const second = await startServer(env)
    procs.push(second.proc)

    const session = await sessionToken('alice')
    const call = (base: string, method: string, path: string, token: string, body?: unknown) =>
      fetch(base + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      })
    const tokens: string[] = []
    for (let i = 0; i < 6; i++) {
      const res = await call(first.base, 'POST', '/api/saved/agent-tokens', session, {
        name: `a${i}`,
        scopes: ['read_items', 'update_workflow_status'],
      })
      tokens.push(((await res.json()) as any).token)
    }
    for (let round = 0; round < 3; round++) {
      const item: any = await (
        await call(second.base, 'POST', '/api/saved/items', session, {
          type: 'event',
          requested_action: 'workflow',
        })
      ).json()
      const results = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const res = await call(
            i % 2 ? first.base : second.base,
            'PATCH',
            `/api/saved/items/${item.id}`,
            tokens[i % 6]!,
            { claim_action: 'claim' },
          )
          return { status: res.status, body: (await res.json()) as any }
        }),
      )
      expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true)
      const holders = new Set(
        results.filter((r) => r.status === 200).map((r) => r.body.claimed_by.id),
      )
      expect(holders.size).toBe(1)
      const history: any = await (
        await call(first.base, 'GET', `/api/saved/items/${item.id}/history`, session)
      ).json()
      expect(history.events.filter((e: any) => e.action === 'claim')).toHaveLength(1)
    }
  }, 60_000)
})
