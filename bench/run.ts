// The load benchmark (not a test): `npm run bench`.
// Seeds databases, starts the bare baseline and the service side by side, loads each with
// autocannon over loopback (64 connections; server on core 0, load generator on core 1 where
// there are two cores), and prints a table of req/s, p50, p99, the ratio to the baseline and
// the server's peak RSS.
//   BENCH_DURATION=10   seconds per scenario, run as BENCH_ROUNDS=3 interleaved slices
//   BENCH_LARGE=1000000 items in the large database (0 skips the 10k-vs-1M comparison)
//   BENCH_WORKERS=1,2   worker counts to measure the REST list with
//   PORT=3901           the service (the WORKERS and large-database runs use PORT+1 and PORT+2)
//   BASELINE_PORT=3900  the bare baseline server
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir, cpus } from 'node:os'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { openDatabase } from '../src/db/client'
import { migrateDatabase } from '../src/db/migrate'
import { seedItems } from '../scripts/seed'
import { portFromEnv } from './ports'

const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const LARGE = Number(process.env.BENCH_LARGE ?? 1_000_000)
const WORKERS = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number)
const PORT = portFromEnv('PORT', 3901)
const BASELINE_PORT = portFromEnv('BASELINE_PORT', 3900)
const SECRET = 'bench-secret-bench-secret-bench-secret!!'
const USER = 'bench'
const pin = (core: number) => (cpus().length > 1 ? ['taskset', '-c', String(core)] : [])

interface Row {
  scenario: string
  rps: number
  p50: number
  p99: number
  ratio?: string
  rss?: string
  note?: string
}
const rows: Row[] = []

async function seeded(dir: string, name: string, count: number) {
  const file = join(dir, name)
  const db = await openDatabase({ url: `file:${file}` })
  await migrateDatabase(db)
  const started = performance.now()
  await seedItems(db, { userId: USER, count })
  db.$client.close()
  console.error(`seeded ${count} items in ${Math.round(performance.now() - started)} ms`)
  return file
}

async function waitFor(url: string) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).status < 500) return
    } catch {}
    await Bun.sleep(50)
  }
  throw new Error(`${url} did not come up`)
}

async function startService(file: string, port: number, workers = 1) {
  const proc = Bun.spawn([...(workers === 1 ? pin(0) : []), process.execPath, 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `file:${file}`,
      JWT_SECRET: SECRET,
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      WORKERS: String(workers),
      DATA_DIR: join(file, '..'),
    },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  await waitFor(`http://127.0.0.1:${port}/health`)
  return proc
}

function peakRss(pid: number): string {
  try {
    const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
    return `${Math.round(kb / 1024)} MB`
  } catch {
    return '-'
  }
}

async function load(spec: Record<string, unknown>) {
  const proc = Bun.spawn(
    [
      ...pin(1),
      'node',
      'bench/load.mjs',
      JSON.stringify({ duration: DURATION, connections: 64, ...spec }),
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  )
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const result = JSON.parse(out.trim().split('\n').pop()!)
  if (result.non2xx || result.errors)
    console.error(`  ${result.non2xx} non-2xx, ${result.errors} errors of ${result.total}`)
  return result as { rps: number; p50: number; p99: number; non2xx: number }
}

async function api(base: string, token: string, method: string, path: string, body?: unknown) {
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

/** Cursors of the first `pages` pages, so a load walks many different pages, not one cached one. */
async function pagePaths(base: string, token: string, path: string, pages: number) {
  const paths = [path]
  let cursor: string | null = null
  for (let i = 1; i < pages; i++) {
    const res: any = await api(base, token, 'GET', cursor ? `${path}&cursor=${cursor}` : path)
    cursor = res.body.next_cursor
    if (!cursor) break
    paths.push(`${path}&cursor=${cursor}`)
  }
  return paths
}

type Result = { rps: number; p50: number; p99: number; non2xx: number }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * Runs the loads in turn, ROUNDS times, each for DURATION / ROUNDS seconds, so that the drift of
 * a shared machine hits every load alike and ratios compare like with like. req/s is the mean
 * over the slices; p50 and p99 are the medians of the slices' values.
 */
async function interleaved(specs: Record<string, unknown>[]): Promise<Result[]> {
  const slices: Result[][] = specs.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, spec] of specs.entries())
      slices[i]!.push(await load({ ...spec, duration: DURATION / ROUNDS }))
  }
  return slices.map((s) => ({
    rps: s.reduce((a, r) => a + r.rps, 0) / s.length,
    p50: median(s.map((r) => r.p50)),
    p99: median(s.map((r) => r.p99)),
    non2xx: s.reduce((a, r) => a + r.non2xx, 0),
  }))
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'saved-bench-'))
  const procs: { kill(): void }[] = []
  try {
    const small = await seeded(dir, 'small.db', 10_000)
    const session = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(USER)
      .setExpirationTime('2h')
      .sign(new TextEncoder().encode(SECRET))

    // Both servers on core 0, loaded one at a time from core 1.
    const baselineProc = Bun.spawn(
      [...pin(0), process.execPath, 'bench/baseline.ts', small, USER, String(BASELINE_PORT)],
      { stdout: 'ignore', stderr: 'inherit' },
    )
    procs.push(baselineProc)
    await waitFor(`http://127.0.0.1:${BASELINE_PORT}/`)
    const service = await startService(small, PORT)
    procs.push(service)
    const base = `http://127.0.0.1:${PORT}`
    const agent = (
      await api(base, session, 'POST', '/api/saved/agent-tokens', {
        name: 'bench',
        scopes: ['read_items', 'update_workflow_status'],
      })
    ).body.token
    const auth = { authorization: `Bearer ${agent}` }

    const listPaths = await pagePaths(base, agent, '/api/saved/items?limit=50', 40)
    const tagPaths = (
      await Promise.all(
        [
          ['music', 'weekend'],
          ['family', 'kids'],
          ['food', 'home'],
          ['travel', 'work'],
        ].map(([a, c]) => pagePaths(base, agent, `/api/saved/items?tags=${a},${c}&limit=50`, 5)),
      )
    ).flat()
    const inboxPaths = await pagePaths(
      base,
      agent,
      '/api/saved/inbox?workflow_status=pending&claim_status=available&limit=50',
      20,
    )
    const ids = (await api(base, agent, 'GET', '/api/saved/items?limit=200')).body.items.map(
      (i: any) => `/api/saved/items/${i.id}`,
    )
    const gqlQuery =
      '{ items(first: 50) { edges { cursor node { id type status workflowStatus title summary actionNote resolutionNote tags requestedAction destinationKind destinationName claimStatus leaseExpiresAt createdAt updatedAt } } pageInfo { hasNextPage endCursor } } }'

    const baselineSpec = {
      url: `http://127.0.0.1:${BASELINE_PORT}`,
      paths: listPaths.map((p) => p.replace('/api/saved/items', '/items')),
    }
    const listSpec = { url: base, paths: listPaths, headers: auth }
    const [b, list, tags, inbox, single, gql] = (await interleaved([
      baselineSpec,
      listSpec,
      { url: base, paths: tagPaths, headers: auth },
      { url: base, paths: inboxPaths, headers: auth },
      { url: base, paths: ids, headers: auth },
      {
        url: base,
        paths: ['/graphql'],
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ query: gqlQuery }),
      },
    ])) as [Result, Result, Result, Result, Result, Result]
    const ratio = (rps: number, of = b.rps) => (rps / of).toFixed(2)
    rows.push({
      scenario: 'baseline: Bun.serve + bun:sqlite, 50 items',
      ...b,
      ratio: '1.00',
      rss: peakRss(baselineProc.pid),
    })
    rows.push({
      scenario: 'REST items list, agent token, limit 50',
      ...list,
      ratio: ratio(list.rps),
    })
    rows.push({ scenario: 'REST list filtered by two tags', ...tags, ratio: ratio(tags.rps) })
    rows.push({ scenario: 'REST inbox pending + available', ...inbox, ratio: ratio(inbox.rps) })
    rows.push({ scenario: 'REST single fetch', ...single, ratio: ratio(single.rps) })
    rows.push({
      scenario: 'GraphQL items(first: 50)',
      ...gql,
      ratio: ratio(gql.rps),
      note: `${ratio(gql.rps, list.rps)} × REST list`,
    })

    // Claim → done → reopen by 16 agents on distinct items.
    const cycle = Bun.spawn(
      [...pin(1), process.execPath, 'bench/claim-cycle.ts', base, session, String(DURATION)],
      { stdout: 'pipe', stderr: 'inherit' },
    )
    const c = JSON.parse((await new Response(cycle.stdout).text()).trim().split('\n').pop()!)
    rows.push({
      scenario: 'claim → done → reopen, 16 agents',
      rps: c.opsPerSecond,
      p50: c.p50,
      p99: c.p99,
      note: `${c.doubleClaims} double claims, ${c.errors} errors`,
    })
    rows.push({
      scenario: '(service peak RSS, 10k items)',
      rps: 0,
      p50: 0,
      p99: 0,
      rss: peakRss(service.pid),
    })

    for (const workers of WORKERS.filter((w) => w > 1)) {
      const multi = await startService(small, PORT + 1, workers)
      procs.push(multi)
      const [wb, r] = (await interleaved([
        baselineSpec,
        { ...listSpec, url: `http://127.0.0.1:${PORT + 1}` },
      ])) as [Result, Result]
      rows.push({
        scenario: `REST items list, WORKERS=${workers} (unpinned)`,
        ...r,
        ratio: ratio(r.rps, wb.rps),
      })
      multi.kill()
      await multi.exited
    }

    if (LARGE > 0) {
      const large = await seeded(dir, 'large.db', LARGE)
      const big = await startService(large, PORT + 2)
      procs.push(big)
      const bigBase = `http://127.0.0.1:${PORT + 2}`
      const bigAgent = (
        await api(bigBase, session, 'POST', '/api/saved/agent-tokens', {
          name: 'bench',
          scopes: ['read_items'],
        })
      ).body.token
      const deep = await pagePaths(bigBase, bigAgent, '/api/saved/items?limit=50', 40)
      const [lb, small10k, r] = (await interleaved([
        baselineSpec,
        listSpec,
        { url: bigBase, paths: deep, headers: { authorization: `Bearer ${bigAgent}` } },
      ])) as [Result, Result, Result]
      rows.push({
        scenario: `REST items list at ${LARGE.toLocaleString('en')} items`,
        ...r,
        ratio: ratio(r.rps, lb.rps),
        rss: peakRss(big.pid),
        note: `p50 ${(r.p50 / Math.max(small10k.p50, 0.01)).toFixed(2)} × the 10k list (${small10k.p50} ms), side by side`,
      })
      big.kill()
    }
  } finally {
    for (const p of procs) p.kill()
    rmSync(dir, { recursive: true, force: true })
  }

  console.log(
    `\n${DURATION}s per scenario in ${ROUNDS} interleaved slices, 64 connections, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}\n`,
  )
  console.log('| scenario | req/s | p50 ms | p99 ms | × baseline | peak RSS | note |')
  console.log('|---|---:|---:|---:|---:|---:|---|')
  for (const r of rows) {
    console.log(
      `| ${r.scenario} | ${r.rps ? Math.round(r.rps).toLocaleString('en') : ''} | ${r.rps ? r.p50 : ''} | ${r.rps ? r.p99 : ''} | ${r.ratio ?? ''} | ${r.rss ?? ''} | ${r.note ?? ''} |`,
    )
  }
}

await main()
