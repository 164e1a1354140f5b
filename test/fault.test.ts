import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { sessionToken, JWT_SECRET } from './helpers'
import { startServer } from './server'

const dirs: string[] = []
const procs: { kill(signal?: number): void }[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

async function call(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, body: (await res.json()) as any }
}

describe('crash safety', () => {
  test('SIGKILL under write load loses nothing acknowledged and leaves an intact database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-fault-'))
    dirs.push(dir)
    const env = { DATA_DIR: dir, DATABASE_URL: `file:${dir}/fault.db`, JWT_SECRET }
    const session = await sessionToken('alice')
    const created = new Set<string>()
    const claimedBy = new Map<string, string>() // item → agent token id, acknowledged
    const done = new Set<string>()
    const agents: { token: string; id: string }[] = []

    for (let round = 0; round < 3; round++) {
      const server = await startServer(env)
      procs.push(server.proc)
      const base = server.base
      if (agents.length === 0) {
        for (let i = 0; i < 4; i++) {
          const { body } = await call(base, session, 'POST', '/api/saved/agent-tokens', {
            name: `a${i}`,
            scopes: ['read_items', 'update_workflow_status'],
          })
          agents.push({ token: body.token, id: body.id })
        }
      }
      let stop = false
      const worker = async (agent: { token: string; id: string }) => {
        while (!stop) {
          try {
            const made = await call(base, session, 'POST', '/api/saved/items', {
              type: 'event',
              requested_action: 'workflow',
              title: 'load',
            })
            if (made.status !== 201) continue
            created.add(made.body.id)
            const claim = await call(
              base,
              agent.token,
              'PATCH',
              `/api/saved/items/${made.body.id}`,
              { claim_action: 'claim' },
            )
            if (claim.status === 200) claimedBy.set(made.body.id, agent.id)
            const finish = await call(
              base,
              agent.token,
              'PATCH',
              `/api/saved/items/${made.body.id}`,
              { workflow_status: 'done', resolution_note: 'ok' },
            )
            if (finish.status === 200) done.add(made.body.id)
          } catch {
            return // the server died mid-request: that request was never acknowledged
          }
        }
      }
      const running = agents.map(worker)
      await Bun.sleep(150 + Math.random() * 400)
      server.proc.kill(9)
      await server.proc.exited
      stop = true
      await Promise.all(running)
    }

    // Restart on the same file: it must come up, and the file must be intact.
    const server = await startServer(env)
    procs.push(server.proc)
    const client = createClient({ url: `file:${dir}/fault.db` })
    const integrity = await client.execute('PRAGMA integrity_check')
    expect(integrity.rows[0]![0]).toBe('ok')
    expect(created.size).toBeGreaterThan(0)
    const rows = await client.execute({
      sql: `SELECT id, workflow_status, claim_id FROM items`,
      args: [],
    })
    const byId = new Map(rows.rows.map((r) => [String(r.id), r]))
    for (const id of created) expect(byId.has(id)).toBe(true)
    for (const id of done) expect(byId.get(id)!.workflow_status).toBe('done')
    for (const [id, agent] of claimedBy) {
      const row = byId.get(id)!
      expect(row.workflow_status === 'done' || row.claim_id === agent).toBe(true)
    }
    // Every done item has its history; no history row points at a missing item.
    const orphans = await client.execute(
      'SELECT count(*) AS n FROM item_events e LEFT JOIN items i ON i.id = e.item_id WHERE i.id IS NULL',
    )
    expect(Number(orphans.rows[0]!.n)).toBe(0)
    for (const id of done) {
      const events = await client.execute({
        sql: "SELECT action FROM item_events WHERE item_id = ? AND action = 'done'",
        args: [id],
      })
      expect(events.rows).toHaveLength(1)
    }
    client.close()
    // And it serves.
    expect((await call(server.base, session, 'GET', '/api/saved/items?limit=1')).status).toBe(200)
  }, 60_000)

  test('SIGTERM finishes in-flight work and exits cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-term-'))
    dirs.push(dir)
    const server = await startServer({
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/term.db`,
      JWT_SECRET,
    })
    procs.push(server.proc)
    const session = await sessionToken('alice')
    const inflight = Array.from({ length: 20 }, () =>
      call(server.base, session, 'POST', '/api/saved/items', { type: 'media' }).catch(() => null),
    )
    await Bun.sleep(5)
    server.proc.kill('SIGTERM')
    const results = await Promise.all(inflight)
    expect(await server.proc.exited).toBe(0)
    const acknowledged = results.filter((r) => r?.status === 201).length
    const client = createClient({ url: `file:${dir}/term.db` })
    const count = Number((await client.execute('SELECT count(*) AS n FROM items')).rows[0]!.n)
    expect(count).toBeGreaterThanOrEqual(acknowledged)
    client.close()
  }, 30_000)
})
