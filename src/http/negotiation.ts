import { Elysia } from 'elysia'

/** The routes whose `format=md` has a Markdown rendering. */
const MARKDOWN_ROUTES = new Set(['/api/saved/items', '/api/saved/items/:id', '/api/saved/inbox'])

/** q-value of the best range in an Accept header matching `type` (exact beats `type/*` beats `*\/*`). */
function quality(accept: string, type: string): number {
  const [major] = type.split('/')
  let best = -1
  let specificity = -1
  for (const part of accept.split(',')) {
    const [range, ...params] = part
      .trim()
      .toLowerCase()
      .split(';')
      .map((s) => s.trim())
    if (!range) continue
    const rank = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' ? 0 : -1
    if (rank < specificity || rank < 0) continue
    const q = params.find((p) => p.startsWith('q='))
    specificity = rank
    best = q ? Number(q.slice(2)) || 0 : 1
  }
  return Math.max(best, 0)
}

/** True when the client prefers Markdown to JSON: `Accept: text/markdown` ranked above application/json. */
export function prefersMarkdown(accept: string | null): boolean {
  if (!accept) return false
  const md = quality(accept, 'text/markdown')
  return md > 0 && md > quality(accept, 'application/json')
}

/**
 * `Accept: text/markdown` as an alternative to `format=md` on the list, inbox and single fetch:
 * the routes keep one switch (`query.format`), set here before validation when the client asked
 * by header and gave no explicit `format`. The OpenAPI document keeps JSON as the only declared
 * content of those 200s, so generated clients stay typed.
 */
export function markdownNegotiation() {
  return new Elysia().onTransform({ as: 'global' }, ({ request, query, route, set }) => {
    if (request.method !== 'GET' || !MARKDOWN_ROUTES.has(route)) return
    set.headers.vary = 'Accept'
    if (query.format === undefined && prefersMarkdown(request.headers.get('accept')))
      query.format = 'md'
  })
}
