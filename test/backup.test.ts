import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { sessionToken, JWT_SECRET } from './helpers'
import { startServer } from './server'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('npm run backup: an online copy of a live database', () => {
  test('while a server process keeps writing, the copy is intact and holds every write acknowledged before the backup began', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saved-backup-'))
    dirs.push(dir)
    const env = { DATA_DIR: dir, DATABASE_URL: `file:${dir}/live.db`, JWT_SECRET }
    const server = await startServer(env)
    procs.push(server.proc)
    const session = await sessionToken('alice')

    const acknowledged: string[] = []
    let writing = true
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        const res = await fetch(`${server.base}/api/saved/items`, {
          method: 'POST',
          headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            type: 'event',
            title: `write ${n}.${i}`,
            summary: 'x'.repeat(2000),
            tags: ['backup'],
          }),
        })
        if (res.status !== 201) throw new Error(`write failed: ${res.status}`)
        acknowledged.push(((await res.json()) as { id: string }).id)
      }
    }
    const writers = [writer(1), writer(2), writer(3)]
    while (acknowledged.length < 300) await Bun.sleep(10)

    const before = [...acknowledged]
    const target = join(dir, 'copy.db')
    const backup = Bun.spawn([process.execPath, 'scripts/backup.ts', target], {
      env: { ...process.env, ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const code = await backup.exited
    const during = acknowledged.length - before.length
    writing = false
    await Promise.all(writers)
    const stdout = await new Response(backup.stdout).text()
    expect({ code, stderr: await new Response(backup.stderr).text() }).toEqual({
      code: 0,
      stderr: '',
    })
    expect(stdout).toContain(`to ${target}`)
    expect(during).toBeGreaterThan(0) // the server really kept writing while the copy was made
    expect(statSync(target).mode & 0o777).toBe(0o600)
    expect(existsSync(`${target}.partial`)).toBe(false)

    // Restore: open the copy as a database of its own.
    const copy = createClient({ url: `file:${target}` })
    expect((await copy.execute('PRAGMA integrity_check')).rows[0]![0]).toBe('ok')
    const ids = new Set((await copy.execute('SELECT id FROM items')).rows.map((r) => String(r[0])))
    expect(before.filter((id) => !ids.has(id))).toEqual([])
    expect(ids.size).toBeLessThanOrEqual(acknowledged.length)
    const tags = await copy.execute("SELECT count(*) FROM item_tags WHERE tag = 'backup'")
    expect(Number(tags.rows[0]![0])).toBe(ids.size)
    copy.close()

    // A second run never overwrites a backup.
    const again = Bun.spawn([process.execPath, 'scripts/backup.ts', target], {
      env: { ...process.env, ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(await again.exited).toBe(1)
    expect(await new Response(again.stderr).text()).toContain('already exists')
  })
})
