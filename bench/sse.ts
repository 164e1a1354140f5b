// The live-events benchmark (not a test): `npm run bench:sse`.
// 1,000 SSE streams open on one service process while 200 changes a second are written, spread
// over the streams' users; measures each event's delay from the change to its arrival on every
// stream (p50/p99/max), checks that every stream got every change of its user, the service's RSS,
// and the REST list benchmark with the streams open against the same list without them.
//   SSE_STREAMS=1000     open streams
//   SSE_USERS=100        users the streams and changes are spread over (1: every change to every stream)
//   SSE_RATE=200         changes per second
//   BENCH_DURATION=10    seconds of load
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir, cpus } from 'node:os'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { openDatabase } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { seedItems } from '../scripts/seed'

const STREAMS = Number(process.env.SSE_STREAMS ?? 1000)
const USERS = Number(process.env.SSE_USERS ?? 100)
const RATE = Number(process.env.SSE_RATE ?? 200)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const CLIENTS = 2
const SECRET = 'bench-secret-bench-secret-bench-secret!!'
const pin = (core: number) => (cpus().length > 1 ? ['taskset', '-c', String(core)] : [])
const key = new TextEncoder().encode(SECRET)
const token = (user: string) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user)
    .setExpirationTime('2h')
    .sign(key)

/** CPU seconds the process has used so far (user + system). */
function cpuSeconds(pid: number) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

function rss(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (field: string) =>
    Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024)
  return { now: mb('VmRSS'), peak: mb('VmHWM') }
}

async function listLoad(base: string, auth: string, paths: string[]) {
  const proc = Bun.spawn(
    [
      ...pin(1),
      'node',
      'bench/load.mjs',
      JSON.stringify({
        url: base,
        paths,
        headers: { authorization: auth },
        duration: DURATION,
        connections: 64,
      }),
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  )
  const out = await new Response(proc.stdout).text()
  return JSON.parse(out.trim().split('\n').pop()!) as {
    rps: number
    p50: number
    p99: number
    non2xx: number
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'saved-ssebench-'))
  const file = join(dir, 'sse.db')
  const db = await openDatabase({ url: `file:${file}` })
  await migrateDatabase(db)
  await seedItems(db, { userId: 'bench', count: 10_000 })
  db.$client.close()
  const port = 3911
  const base = `http://127.0.0.1:${port}`
  const service = Bun.spawn([...pin(0), process.execPath, 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
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
  const procs: { kill(): void }[] = [service]
  try {
    for (let i = 0; i < 200; i++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break
      } catch {}
      await Bun.sleep(50)
    }
    const bench = `Bearer ${await token('bench')}`
    const paths = ['/api/saved/items?limit=50']
    let cursor: string | null = null
    for (let i = 1; i < 40; i++) {
      const page: any = await (
        await fetch(`${base}${paths[0]}${cursor ? `&cursor=${cursor}` : ''}`, {
          headers: { authorization: bench },
        })
      ).json()
      cursor = page.next_cursor
      if (!cursor) break
      paths.push(`/api/saved/items?limit=50&cursor=${cursor}`)
    }

    const users = Array.from({ length: USERS }, (_, i) => `sse-user-${i}`)
    const tokens = new Map(await Promise.all(users.map(async (u) => [u, await token(u)] as const)))
    const before = await listLoad(base, bench, paths)
    console.error(`list alone: ${Math.round(before.rps)} req/s`)

    // The writer: RATE item creations a second, spread over the users, until stopped.
    const made = new Map(users.map((u) => [u, 0]))
    let writeErrors = 0
    const startWriter = (count: boolean) => {
      let writing = true
      const done = (async () => {
        const started = performance.now()
        let n = 0
        const inflight: Promise<void>[] = []
        while (writing) {
          const due = started + (n * 1000) / RATE
          const wait = due - performance.now()
          if (wait > 0) await Bun.sleep(wait)
          const user = users[n % USERS]!
          n++
          inflight.push(
            fetch(`${base}/api/saved/items`, {
              method: 'POST',
              headers: {
                authorization: `Bearer ${tokens.get(user)}`,
                'content-type': 'application/json',
              },
              body: JSON.stringify({
                type: 'event',
                title: `change ${n}`,
                requested_action: 'workflow',
              }),
            })
              .then(
                (r) => (
                  r.status === 201 ? count && made.set(user, made.get(user)! + 1) : writeErrors++,
                  void r.body?.cancel()
                ),
              )
              .catch(() => void writeErrors++),
          )
        }
        await Promise.all(inflight)
        return n
      })()
      return () => ((writing = false), done)
    }
    const stopQuiet = startWriter(false)
    const writesOnly = await listLoad(base, bench, paths)
    await stopQuiet()
    // The service's CPU for the writes alone, then (below) for the same writes with the streams open.
    const measureCpu = async (count: boolean) => {
      const stop = startWriter(count)
      const before = cpuSeconds(service.pid)
      await Bun.sleep(5000)
      const used = cpuSeconds(service.pid) - before
      await stop()
      return used / 5
    }
    const cpuWrites = await measureCpu(false)
    console.error(`list with writes, no streams: ${Math.round(writesOnly.rps)} req/s`)

    // Streams: stream i belongs to user i % USERS.
    const streamUsers = Array.from({ length: STREAMS }, (_, i) => users[i % USERS]!)
    const stopFile = join(dir, 'stop')
    const clients = Array.from({ length: CLIENTS }, (_, c) => {
      const mine = streamUsers.filter((_, i) => i % CLIENTS === c)
      const proc = Bun.spawn(
        [
          ...pin(1),
          process.execPath,
          'bench/sse-client.ts',
          JSON.stringify({ base, tokens: mine.map((u) => tokens.get(u)), stopFile }),
        ],
        {
          // Bun's fetch keeps at most 256 requests open at once by default; a stream is one for good.
          env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '2048' },
          stdout: 'pipe',
          stderr: 'inherit',
        },
      )
      procs.push(proc)
      return { proc, users: mine, out: new Response(proc.stdout).text() }
    })
    for (
      let i = 0;
      i < 600 && readdirSync(dir).filter((f) => f.startsWith('stop.open.')).length < CLIENTS;
      i++
    )
      await Bun.sleep(100)
    await Bun.sleep(1000)
    const rssOpen = rss(service.pid)
    const cpuStreams = await measureCpu(true)

    const stopWriter = startWriter(true)
    const during = await listLoad(base, bench, paths)
    const writes = await stopWriter()
    await Bun.sleep(3000)
    const rssEnd = rss(service.pid)
    writeFileSync(stopFile, '')
    const results = await Promise.all(
      clients.map(async (c) => ({
        users: c.users,
        ...JSON.parse((await c.out).trim().split('\n').pop()!),
      })),
    )

    let missing = 0
    let extra = 0
    for (const r of results)
      r.counts.forEach((n: number, i: number) => {
        const want = made.get(r.users[i])!
        if (n < want) missing += want - n
        if (n > want) extra += n - want
      })
    const events = results.reduce((a, r) => a + r.events, 0)
    const p99 = Math.max(...results.map((r) => r.p99))
    const p50 = Math.max(...results.map((r) => r.p50))
    const max = Math.max(...results.map((r) => r.max))
    const failures = results.flatMap((r) => r.failures)
    console.log(
      `\n${STREAMS} streams over ${USERS} users, ${writes} changes in ${DURATION}s (${RATE}/s target, ${writeErrors} write errors), ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}\n`,
    )
    console.log('| measure | value |')
    console.log('|---|---:|')
    console.log(
      `| events delivered (every change × every stream of its user) | ${events.toLocaleString('en')} (missing ${missing}, extra ${extra}, stream failures ${failures.length}) |`,
    )
    console.log(`| change → event delay p50 / p99 / max | ${p50} / ${p99} / ${max} ms |`)
    console.log(
      `| service CPU at ${RATE} changes/s: no streams / streams open | ${Math.round(cpuWrites * 100)} % / ${Math.round(cpuStreams * 100)} % of a core |`,
    )
    console.log(
      `| service RSS: streams open / after the load / peak | ${rssOpen.now} / ${rssEnd.now} / ${rssEnd.peak} MB |`,
    )
    console.log(
      `| REST list alone | ${Math.round(before.rps).toLocaleString('en')} req/s, p99 ${before.p99} ms |`,
    )
    console.log(
      `| REST list with ${RATE} changes/s, no streams | ${Math.round(writesOnly.rps).toLocaleString('en')} req/s, p99 ${writesOnly.p99} ms |`,
    )
    console.log(
      `| REST list with ${RATE} changes/s and the streams open | ${Math.round(during.rps).toLocaleString('en')} req/s, p99 ${during.p99} ms: ${((1 - during.rps / writesOnly.rps) * 100).toFixed(1)} % slower than with the same writes and no streams, ${((1 - during.rps / before.rps) * 100).toFixed(1)} % than the list alone |`,
    )
  } finally {
    for (const p of procs) p.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
