import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { JWT_SECRET } from './helpers'
import { startServer } from './server'
import { redactDatabaseUrl } from '../src/config'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'saved-log-'))
  dirs.push(dir)
  return dir
}

describe('DATABASE_URL secrets never reach the log (issue 15 row 8)', () => {
  test('redaction strips user:pass@ and credential query parameters, keeps the rest', () => {
    expect(redactDatabaseUrl('libsql://user:pw@db.turso.io/x?authToken=abc&tls=1')).toBe(
      'libsql://db.turso.io/x?authToken=[redacted]&tls=1',
    )
    expect(redactDatabaseUrl('https://db.example?token=abc')).toBe(
      'https://db.example?token=[redacted]',
    )
    expect(redactDatabaseUrl('file:./data/saved.db')).toBe('file:./data/saved.db')
  })

  test('the start-up log of a running server holds no ?authToken= value', async () => {
    const dir = tmp()
    const server = await startServer({
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/s.db?authToken=SUPERSECRET123`,
      JWT_SECRET,
    })
    procs.push(server.proc)
    const listening = server
      .output()
      .split('\n')
      .find((l) => l.includes('"listening"'))!
    expect(JSON.parse(listening).database).toBe(`file:${dir}/s.db?authToken=[redacted]`)
    expect(server.output()).not.toContain('SUPERSECRET123')
  })

  test('an unreachable database stops the process with one line and no credentials', async () => {
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: tmp(),
        JWT_SECRET,
        DATABASE_URL: 'http://admin:HUNTER2PASS@127.0.0.1:1/?authToken=SUPERSECRET456',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(await proc.exited).toBe(1)
    const all = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text())
    expect(all.trim().split('\n')).toHaveLength(1)
    expect(all).toStartWith('Database error: http://127.0.0.1:1/?authToken=[redacted]: ')
    expect(all).not.toContain('HUNTER2PASS')
    expect(all).not.toContain('SUPERSECRET456')
  })
})
