// Claim → done → reopen by 16 agents, each on its own item, for a fixed time; plus, every cycle,
// all 16 race for one shared item, and any moment where two agents both got a 200 claim on it
// counts as a double claim (must be 0). Prints a JSON summary.
//   bun bench/claim-cycle.ts <base url> <session jwt> <seconds>
const [base, session, seconds] = process.argv.slice(2)
const AGENTS = 16

async function call(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, body: (await res.json()) as any }
}

const tokens: string[] = []
const items: string[] = []
for (let i = 0; i < AGENTS; i++) {
  tokens.push(
    (
      await call(session!, 'POST', '/api/saved/agent-tokens', {
        name: `cycle-${i}`,
        scopes: ['read_items', 'update_workflow_status'],
      })
    ).body.token,
  )
  items.push(
    (
      await call(session!, 'POST', '/api/saved/items', {
        type: 'event',
        requested_action: 'workflow',
        title: `cycle ${i}`,
      })
    ).body.id,
  )
}

const latencies: number[] = []
let ops = 0
let errors = 0
let doubleClaims = 0
const deadline = Date.now() + Number(seconds) * 1000

async function agent(i: number) {
  const token = tokens[i]!
  const path = `/api/saved/items/${items[i]}`
  while (Date.now() < deadline) {
    for (const body of [
      { claim_action: 'claim' },
      { workflow_status: 'done' },
      { workflow_status: 'pending' },
    ]) {
      const started = performance.now()
      const res = await call(token, 'PATCH', path, body)
      latencies.push(performance.now() - started)
      if (res.status !== 200) errors++
      else ops++
    }
  }
}

async function contention() {
  while (Date.now() < deadline) {
    const shared = (
      await call(session!, 'POST', '/api/saved/items', {
        type: 'event',
        requested_action: 'workflow',
      })
    ).body.id
    const results = await Promise.all(
      tokens.map((t) => call(t, 'PATCH', `/api/saved/items/${shared}`, { claim_action: 'claim' })),
    )
    const winners = results.filter((r) => r.status === 200).length
    if (winners > 1) doubleClaims += winners - 1
    await Bun.sleep(50)
  }
}

const started = performance.now()
await Promise.all([...Array.from({ length: AGENTS }, (_, i) => agent(i)), contention()])
const elapsed = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
const pct = (p: number) => Math.round(latencies[Math.floor((latencies.length - 1) * p)]! * 10) / 10
console.log(
  JSON.stringify({
    opsPerSecond: Math.round(ops / elapsed),
    p50: pct(0.5),
    p99: pct(0.99),
    doubleClaims,
    errors,
  }),
)
export {}
