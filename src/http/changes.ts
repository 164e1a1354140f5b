import { Elysia } from 'elysia'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import type { ChangeRecord } from '../domain/change-record'
import { followChanges, listChanges } from '../domain/changes'
import type { Deps } from '../domain/deps'
import { authentication, secured } from './auth'
import { ChangePageSchema, ChangesQuery, EventsQuery } from './push-schemas'
import { documented, errors } from './schemas'
import { changeJson } from './push-serialize'

export interface ChangeRouteDeps {
  deps: Deps
  resolveCaller: CallerResolver
  rateLimit: CallerRateLimiter
  /** A comment line on every open stream at least this often. */
  keepAliveMs: number
}

const encoder = new TextEncoder()

/** One SSE event per record: `id` is the seq, so a reconnecting EventSource resumes by itself. */
const sseEvent = (c: ChangeRecord) =>
  encoder.encode(`id: ${c.seq}\nevent: ${c.action}\ndata: ${JSON.stringify(changeJson(c))}\n\n`)

/** `/api/saved/changes` (the resumable feed) and `/api/saved/events` (the same records, live, over SSE). */
export function changeRoutes({ deps, resolveCaller, rateLimit, keepAliveMs }: ChangeRouteDeps) {
  // Live records are shared by the streams of one reader (ChangeFollower.memo): encode each once.
  const encoded = new WeakMap<ChangeRecord, Uint8Array>()
  const eventBytes = (c: ChangeRecord) => {
    let bytes = encoded.get(c)
    if (!bytes) encoded.set(c, (bytes = sseEvent(c)))
    return bytes
  }
  return new Elysia({ prefix: '/api/saved' })
    .use(authentication(resolveCaller, rateLimit))
    .get(
      '/changes',
      async ({ caller, query }) => {
        const page = await listChanges(deps, caller, { after: query.after, limit: query.limit })
        return { changes: page.changes.map(changeJson), next_cursor: page.nextCursor }
      },
      {
        query: ChangesQuery,
        detail: {
          responses: documented({ 200: ChangePageSchema, ...errors(400, 401, 403, 429) }),
          summary: 'The change feed: every change to your items, oldest first, resumable',
          description:
            'next_cursor is always present (also on an empty page); pass it as `after` to resume with nothing skipped or repeated. Deletions are records too.',
          tags: ['changes'],
          ...secured,
        },
      },
    )
    .get(
      '/events',
      async ({ caller, query, request, server }) => {
        const lastEventId = request.headers.get('last-event-id')?.trim()
        const stream = await followChanges(
          deps,
          caller,
          { after: lastEventId || query.after, inbox: query.inbox === 'true' },
          request.signal,
        )
        // A stream is idle between changes by design; the keep-alive comments hold it open.
        server?.timeout(request, 0)
        let keepAlive: ReturnType<typeof setInterval> | undefined
        const stop = () => {
          clearInterval(keepAlive)
          void stream.return()
        }
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(
              encoder.encode(`: stream of changes after ${stream.position}\nretry: 1000\n\n`),
            )
            keepAlive = setInterval(() => {
              try {
                controller.enqueue(encoder.encode(': keep-alive\n\n'))
              } catch {
                stop()
              }
            }, keepAliveMs)
            request.signal.addEventListener('abort', stop)
          },
          async pull(controller) {
            const next = await stream.next()
            if (next.done) {
              clearInterval(keepAlive)
              try {
                controller.close()
              } catch {}
            } else {
              // Whatever else is ready goes out in the same write.
              const more = stream.takeReady()
              if (more.length === 0) controller.enqueue(eventBytes(next.value))
              else {
                const parts = [next.value, ...more].map(eventBytes)
                const chunk = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
                let at = 0
                for (const p of parts) chunk.set(p, at), (at += p.byteLength)
                controller.enqueue(chunk)
              }
            }
          },
          cancel: stop,
        })
        return new Response(body, {
          headers: {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-store',
            connection: 'keep-alive',
            'x-accel-buffering': 'no',
          },
        })
      },
      {
        query: EventsQuery,
        detail: {
          responses: {
            ...(documented(errors(400, 401, 403, 429)) as object),
            200: {
              description:
                'Server-Sent Events: each change is one event with `id: <seq>`, `event: <action>` and `data: <change record as JSON>` (the schema of a change in GET /api/saved/changes). A comment line keeps the connection open.',
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
          } as never,
          summary: 'Live changes over Server-Sent Events',
          description:
            'Resume with Last-Event-ID or ?after=; without either the stream starts with the next change. ?inbox=true sends only items with a requested action. Changes made through any server process reach every stream within 2 seconds.',
          tags: ['changes'],
          ...secured,
        },
      },
    )
}
