import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sessionToken, JWT_SECRET } from './helpers'

/** Starts `npm start`'s entry point as a real process on a free port; resolves when it listens. */
export async function startServer(env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0', ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = proc.stdout.getReader()
  let buffer = ''
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += new TextDecoder().decode(value)
    const match = /"api":"http:\/\/127\.0\.0\.1:(\d+)/.exec(buffer)
    if (match) {
      reader.releaseLock()
      void proc.stdout.pipeTo(new WritableStream()).catch(() => {})
      return { proc, base: `http://127.0.0.1:${match[1]}` }
    }
  }
  proc.kill()
  throw new Error(`server did not start: ${buffer}`)
}

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
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      })
    const tokens: string[] = []
    for (let i = 0; i < 6; i++) {
      const res = await call(first.base, 'POST', '/api/saved/agent-tokens', session, { name: `a${i}`, scopes: ['read_items', 'update_workflow_status'] })
      tokens.push(((await res.json()) as any).token)
    }
    for (let round = 0; round < 3; round++) {
      const item: any = await (await call(second.base, 'POST', '/api/saved/items', session, { type: 'event', requested_action: 'workflow' })).json()
      const results = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const res = await call(i % 2 ? first.base : second.base, 'PATCH', `/api/saved/items/${item.id}`, tokens[i % 6]!, { claim_action: 'claim' })
          return { status: res.status, body: (await res.json()) as any }
        }),
      )
      expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true)
      const holders = new Set(results.filter((r) => r.status === 200).map((r) => r.body.claimed_by.id))
      expect(holders.size).toBe(1)
      const history: any = await (await call(first.base, 'GET', `/api/saved/items/${item.id}/history`, session)).json()
      expect(history.events.filter((e: any) => e.action === 'claim')).toHaveLength(1)
    }
  }, 60_000)
})
