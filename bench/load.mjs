// Runs one autocannon load (under Node, pinned to its own core by the runner) and prints a JSON
// summary. Input: a JSON spec as the only argument: { url, paths[], headers, method, body,
// connections, duration }. Paths rotate request by request, so the load spans many pages.
import autocannon from 'autocannon'

const spec = JSON.parse(process.argv[2])
let i = 0
const result = await autocannon({
  url: spec.url,
  connections: spec.connections ?? 64,
  duration: spec.duration ?? 10,
  headers: spec.headers ?? {},
  method: spec.method ?? 'GET',
  body: spec.body,
  requests: [
    {
      setupRequest(req) {
        const path = spec.paths[i++ % spec.paths.length]
        return { ...req, path }
      },
    },
  ],
})
console.log(
  JSON.stringify({
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    total: result.requests.total,
  }),
)
