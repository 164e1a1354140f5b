// One process of SSE bench clients (see bench/sse.ts): opens one stream per token, counts every
// event per stream and measures each event's delay from the change's `at` to its arrival.
// Input: JSON { base, tokens[], stopFile }. Runs until `stopFile` exists, then prints a JSON summary.
import { existsSync, writeFileSync } from 'node:fs'

const { base, tokens, stopFile } = JSON.parse(process.argv[2]!) as {
  base: string
  tokens: string[]
  stopFile: string
}
const EVENT = /id: (\d+)\nevent: [a-z]+\ndata: \{"seq":"\d+","at":"([^"]+)"/g
const latencies: number[] = []
const counts: number[] = tokens.map(() => 0)
const failures: string[] = []
const controllers: AbortController[] = []
let opened = 0

await Promise.all(
  tokens
    .map(async (token, i) => {
      const controller = new AbortController()
      controllers.push(controller)
      try {
        const res = await fetch(`${base}/api/saved/events`, {
          headers: { authorization: `Bearer ${token}` },
          signal: controller.signal,
        })
        if (res.status !== 200) throw new Error(`status ${res.status}`)
        opened++
        const decoder = new TextDecoder()
        let rest = ''
        for await (const chunk of res.body!) {
          const now = Date.now()
          const text = rest + decoder.decode(chunk, { stream: true })
          const end = text.lastIndexOf('\n\n')
          if (end < 0) {
            rest = text
            continue
          }
          rest = text.slice(end + 2)
          for (const m of text.slice(0, end + 2).matchAll(EVENT)) {
            counts[i]!++
            latencies.push(now - Date.parse(m[2]!))
          }
        }
      } catch (error) {
        if (!controller.signal.aborted) failures.push(String(error))
      }
    })
    .concat(
      (async () => {
        while (opened + failures.length < tokens.length && !existsSync(stopFile))
          await Bun.sleep(20)
        console.error(`  client ${process.pid}: ${opened} streams open`)
        writeFileSync(`${stopFile}.open.${process.pid}`, String(opened))
        while (!existsSync(stopFile)) await Bun.sleep(50)
        for (const c of controllers) c.abort()
      })(),
    ),
)

latencies.sort((a, b) => a - b)
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0
console.log(
  JSON.stringify({
    counts,
    events: latencies.length,
    p50: pct(0.5),
    p99: pct(0.99),
    max: latencies[latencies.length - 1] ?? 0,
    failures,
  }),
)
