// The soak run (not a test): a few minutes of mixed load against one server process; every
// interval prints RSS, throughput and latency, so a creep upward shows as a trend.
//   npm run soak            (SOAK_MINUTES=3, SOAK_INTERVAL=20 seconds, SOAK_CONCURRENCY=32, PORT=3950)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { openDatabase } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { seedItems } from '../scripts/seed'
import { portFromEnv } from './ports'

const MINUTES = Number(process.env.SOAK_MINUTES ?? 3)
const INTERVAL = Number(process.env.SOAK_INTERVAL ?? 20)
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 32)
const SECRET = 'soak-secret-soak-secret-soak-secret-!!'
const PORT = portFromEnv('PORT', 3950)

const dir = mkdtempSync(join(tmpdir(), 'saved-soak-'))
const file = join(dir, 'soak.db')
const db = await openDatabase({ url: `file:${file}` })
await migrateDatabase(db)
await seedItems(db, { userId: 'soak', count: 20_000 })
db.$client.close()

const server = Bun.spawn([process.execPath, 'src/main.ts'], {
  env: {
    ...process.env,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    DATABASE_URL: `file:${file}`,
    JWT_SECRET: SECRET,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
  },
  stdout: 'inherit',
  stderr: 'inherit',
})
const base = `http://127.0.0.1:${PORT}`
for (let i = 0; i < 200; i++) {
  try {
    if ((await fetch(`${base}/health`)).ok) break
  } catch {}
  await Bun.sleep(50)
}

const session = await new SignJWT({})
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject('soak')
  .setExpirationTime('2h')
  .sign(new TextEncoder().encode(SECRET))
async function call(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, body: (await res.json().catch(() => null)) as any }
}
const agents: string[] = []
for (let i = 0; i < 8; i++)
  agents.push(
    (
      await call(session, 'POST', '/api/saved/agent-tokens', {
        name: `soak-${i}`,
        scopes: ['read_items', 'update_workflow_status'],
      })
    ).body.token,
  )
const ids: string[] = (await call(agents[0]!, 'GET', '/api/saved/items?limit=200')).body.items.map(
  (i: any) => i.id,
)

let latencies: number[] = []
let errors = 0
const deadline = Date.now() + MINUTES * 60_000

/** One simulated client: mostly reads, some claims and completions, a few new items. */
async function client(n: number) {
  const agent = agents[n % agents.length]!
  let cursor: string | null = null
  while (Date.now() < deadline) {
    const r = Math.random()
    const started = performance.now()
    let status: number
    if (r < 0.35) {
      const res: any = await call(
        agent,
        'GET',
        `/api/saved/items?limit=50${cursor ? `&cursor=${cursor}` : ''}`,
      )
      cursor = res.body?.next_cursor ?? null
      status = res.status
    } else if (r < 0.55)
      status = (
        await call(
          agent,
          'GET',
          '/api/saved/inbox?workflow_status=pending&claim_status=available&limit=20',
        )
      ).status
    else if (r < 0.7)
      status = (
        await call(agent, 'GET', `/api/saved/items/${ids[Math.floor(Math.random() * ids.length)]}`)
      ).status
    else if (r < 0.8)
      status = (
        await call(agent, 'POST', '/graphql', {
          query: '{ items(first: 20) { edges { node { id title claimStatus } } } }',
        })
      ).status
    else if (r < 0.95) {
      const id = ids[Math.floor(Math.random() * ids.length)]!
      const claim = await call(agent, 'PATCH', `/api/saved/items/${id}`, {
        claim_action: 'claim',
        lease_seconds: 30,
      })
      status = claim.status === 409 ? 200 : claim.status
      if (claim.status === 200)
        await call(agent, 'PATCH', `/api/saved/items/${id}`, { claim_action: 'release' })
    } else
      status = (
        await call(session, 'POST', '/api/saved/items', {
          type: 'media',
          title: 'soak',
          tags: ['soak'],
        })
      ).status
    latencies.push(performance.now() - started)
    if (status >= 500 || status === 0) errors++
  }
}

const rssMb = () =>
  Math.round(
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]) / 1024,
  )
const rows: string[] = []
const sampler = (async () => {
  let t = 0
  while (Date.now() < deadline) {
    await Bun.sleep(INTERVAL * 1000)
    t += INTERVAL
    const sorted = latencies.sort((a, b) => a - b)
    const pct = (p: number) =>
      sorted.length ? sorted[Math.floor((sorted.length - 1) * p)]!.toFixed(1) : '-'
    const row = `| ${t}s | ${Math.round(sorted.length / INTERVAL)} | ${pct(0.5)} | ${pct(0.99)} | ${rssMb()} MB | ${errors} |`
    console.error(row)
    rows.push(row)
    latencies = []
  }
})()

await Promise.all([...Array.from({ length: CONCURRENCY }, (_, i) => client(i)), sampler])
server.kill()
rmSync(dir, { recursive: true, force: true })
console.log(
  `\nSoak: ${MINUTES} min, ${CONCURRENCY} clients, mixed load (35% list, 20% inbox, 15% single, 10% GraphQL, 15% claim/release, 5% create)\n`,
)
console.log('| elapsed | req/s | p50 ms | p99 ms | RSS | 5xx so far |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const row of rows) console.log(row)
