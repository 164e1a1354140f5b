import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sessionToken, setup, expectEnvelope, JWT_SECRET } from './helpers'
import { rawRequest, startServer } from './server'

const procs: { kill(signal?: number): void }[] = []
const dirs: string[] = []
afterEach(() => {
  for (const p of procs.splice(0)) p.kill(9)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

async function server(env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'saved-host-'))
  dirs.push(dir)
  // NODE_ENV unset: the case where Bun used to serve its development error page.
  const started = await startServer({
    DATA_DIR: dir,
    DATABASE_URL: `file:${dir}/host.db`,
    JWT_SECRET,
    NODE_ENV: '',
    ...env,
  })
  procs.push(started.proc)
  return started
}

describe('Host header (issue 15 rows 5 and 6)', () => {
  test('missing, empty or malformed Host: 400 envelope, never a 500 or a debug page; one log line each, no stack', async () => {
    const { port, output } = await server()
    const requests = [
      'GET /health HTTP/1.0\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n',
      // Hosts that would make the parsed path differ from the routed one.
      'GET /health HTTP/1.1\r\nHost: a?x\r\nConnection: close\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost: a#x\r\nConnection: close\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost: u@a\r\nConnection: close\r\n\r\n',
      'GET /api/saved/items HTTP/1.0\r\n\r\n',
    ]
    for (const bytes of requests) {
      const res = await rawRequest(port, bytes)
      expect(res.status).toBe(400)
      expect(res.headers.toLowerCase()).toContain('content-type: application/json')
      expect(res.body).not.toContain('<html')
      expectEnvelope(JSON.parse(res.body), 'invalid_request')
    }
    await Bun.sleep(200)
    const lines = output().trim().split('\n')
    // Every line the process wrote is one JSON object: no stack traces, no Bun error output.
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request')
    expect(logged.filter((l) => l.status === 400 && l.path === '(malformed request)')).toHaveLength(
      requests.length,
    )
    expect(lines.some((l) => l.includes('"level":"error"'))).toBe(false)
  })

  test('a short Host does not make /<junk>/api/saved/… reach the real route; a short valid Host still routes', async () => {
    const { port, base } = await server()
    const session = await sessionToken('alice')
    const created = await fetch(`${base}/api/saved/items`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'event', title: 'Keep me' }),
    })
    const item = (await created.json()) as { id: string }
    const body = JSON.stringify({ workflow_status: 'done' })
    for (const host of ['a', 'ab', 'abc']) {
      const patch = await rawRequest(
        port,
        `PATCH /zzzz/api/saved/items/${item.id} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${session}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      )
      expect(patch.status).toBe(404)
      expectEnvelope(JSON.parse(patch.body), 'not_found')
      const health = await rawRequest(
        port,
        `GET /zz/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      )
      expect(health.status).toBe(404)
      // A real one-label host (a container name) reaches its route.
      const ok = await rawRequest(
        port,
        `GET /api/saved/items/${item.id} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${session}\r\nConnection: close\r\n\r\n`,
      )
      expect(ok.status).toBe(200)
      expect(ok.headers.toLowerCase()).toContain('cache-control: no-store')
    }
    const after = await fetch(`${base}/api/saved/items/${item.id}`, {
      headers: { authorization: `Bearer ${session}` },
    })
    expect(((await after.json()) as any).workflow_status).toBe('pending')
  })

  test('in-process: a URL with a short host and a junk prefix is a 404, not the route', async () => {
    const ctx = await setup()
    const res = await ctx.app.handle(new Request('http://a/zz/health'))
    expect(res.status).toBe(404)
    expectEnvelope(await res.json(), 'not_found')
    expect((await ctx.app.handle(new Request('http://a/health'))).status).toBe(200)
  })
})
