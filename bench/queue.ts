// The work-queue benchmark (not a test): `npm run bench:queue`.
// 1. Drain: 16 agents (each its own token) loop claim next → done over 20,000 seeded inbox items;
//    prints items/s and checks that every item was done exactly once (0 double processing).
// 2. Waiters: 1,000 idle long-polling claim-next requests; the server's CPU over 10 s of idling,
//    then items created one at a time from a second process and the time until a waiter holds
//    each (p50/p99). Server on core 0, load on core 1 (where there are two cores).
//   BENCH_ITEMS=20000 BENCH_AGENTS=16 BENCH_WAITERS=1000 BENCH_PORT=3300
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { openDatabase } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { newId } from '../src/domain/ids'

// Bun's fetch keeps at most 256 requests in flight by default; 1,000 long polls need more.
if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  // …and the load generator runs pinned to core 1, the server (below) to core 0.
  const onCore1 = (await import('node:os')).cpus().length > 1 ? ['taskset', '-c', '1'] : []
  const child = Bun.spawn([...onCore1, process.execPath, ...process.argv.slice(1)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await child.exited)
}

const ITEMS = Number(process.env.BENCH_ITEMS ?? 20_000)
const AGENTS = Number(process.env.BENCH_AGENTS ?? 16)
const WAITERS = Number(process.env.BENCH_WAITERS ?? 1000)
const PORT = Number(process.env.BENCH_PORT ?? 3300)
const SECRET = 'bench-secret-bench-secret-bench-secret!!'
const base = `http://127.0.0.1:${PORT}`

const dir = mkdtempSync(join(tmpdir(), 'saved-queue-bench-'))
const file = join(dir, 'queue.db')
const db = await openDatabase({ url: `file:${file}` })
await migrateDatabase(db)
const now = Date.now()
for (let start = 0; start < ITEMS; start += 1000) {
  await db.$client.batch(
    Array.from({ length: Math.min(1000, ITEMS - start) }, (_, i) => ({
      sql: `INSERT INTO items (id, user_id, type, status, workflow_status, tags, requested_action, created_at, updated_at)
            VALUES (?, 'bench', 'event', 'extracted', 'pending', '[]', 'workflow', ?, ?)`,
      args: [
        newId('itm', now - ITEMS + start + i),
        now - ITEMS + start + i,
        now - ITEMS + start + i,
      ],
    })),
    'write',
  )
}
db.$client.close()

const pin = (core: number) => (cpus().length > 1 ? ['taskset', '-c', String(core)] : [])
const server = Bun.spawn([...pin(0), process.execPath, 'src/main.ts'], {
  // The load generator (this process) runs on the other core.
  env: {
    ...process.env,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    DATABASE_URL: `file:${file}`,
    JWT_SECRET: SECRET,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
    MAX_WAITING_CLAIMS_PER_CALLER: String(WAITERS),
  },
  stdout: 'inherit',
  stderr: 'inherit',
})
for (let i = 0; i < 200; i++) {
  try {
    if ((await fetch(`${base}/health`)).ok) break
  } catch {}
  await Bun.sleep(50)
}

const session = await new SignJWT({})
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject('bench')
  .setIssuedAt()
  .setExpirationTime('1h')
  .sign(new TextEncoder().encode(SECRET))
const call = async (token: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json().catch(() => null)) as any }
}
const tokens: string[] = []
for (let i = 0; i < AGENTS; i++)
  tokens.push(
    (
      await call(session, 'POST', '/api/saved/agent-tokens', {
        name: `agent-${i}`,
        scopes: ['read_items', 'update_workflow_status'],
      })
    ).body.token,
  )

// 1. Drain.
const done = new Map<string, number>()
let failures = 0
const drainStart = performance.now()
await Promise.all(
  tokens.map(async (token) => {
    for (;;) {
      const next = await call(token, 'POST', '/api/saved/inbox/claim', { lease_seconds: 60 })
      if (next.status !== 200) {
        failures++
        continue
      }
      if (!next.body.item) return
      const fin = await call(token, 'PATCH', `/api/saved/items/${next.body.item.id}`, {
        workflow_status: 'done',
        lease_id: next.body.lease.id,
      })
      if (fin.status === 200) done.set(next.body.item.id, (done.get(next.body.item.id) ?? 0) + 1)
      else failures++
    }
  }),
)
const drainSeconds = (performance.now() - drainStart) / 1000
const doubles = [...done.values()].filter((n) => n > 1).length

// 2. Waiters.
const cpuTicks = () => {
  const stat = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return Number(stat[11]) + Number(stat[12]) // utime + stime, in clock ticks (1/100 s)
}
const waiting = new Set<Promise<unknown>>()
const arrivals: number[] = []
let stop = false
const waiter = async () => {
  while (!stop) {
    const res = await call(tokens[0]!, 'POST', '/api/saved/inbox/claim', { wait_seconds: 60 })
    if (res.body?.item) arrivals.push(performance.now())
  }
}
for (let i = 0; i < WAITERS; i++) {
  const p = waiter()
  waiting.add(p)
}
await Bun.sleep(2000)
const ticks0 = cpuTicks()
await Bun.sleep(10_000)
const idleCpu = (cpuTicks() - ticks0) / 10 / 100 // share of one core
const latencies: number[] = []
for (let i = 0; i < 50; i++) {
  const before = arrivals.length
  const sent = performance.now()
  await call(session, 'POST', '/api/saved/items', { type: 'event', requested_action: 'workflow' })
  while (arrivals.length === before && performance.now() - sent < 5000) await Bun.sleep(1)
  latencies.push((arrivals[arrivals.length - 1] ?? Infinity) - sent)
  await Bun.sleep(100)
}
stop = true
latencies.sort((a, b) => a - b)
const pct = (p: number) => Math.round(latencies[Math.floor((latencies.length - 1) * p)]! * 10) / 10

console.log('\n| scenario | result | target |\n|---|---:|---:|')
console.log(
  `| drain: ${AGENTS} agents, claim next + done, ${ITEMS} items | ${Math.round(ITEMS / drainSeconds)} items/s (${done.size} done, ${doubles} twice, ${failures} non-200) | ≥ 1,000 items/s, 0 twice |`,
)
console.log(
  `| ${WAITERS} idle waiting claim-next requests | ${(idleCpu * 100).toFixed(1)} % of a core | < 5 % |`,
)
console.log(
  `| new item → a waiter holds it (50 items) | p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms | p99 ≤ 100 ms |`,
)
server.kill()
rmSync(dir, { recursive: true, force: true })
process.exit(0)
