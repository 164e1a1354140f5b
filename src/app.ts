import { Elysia } from 'elysia'
import type { Config } from './config'
import type { Db } from './db/client'
import { AppError, invalid } from './errors'
import { createLogger, type Logger } from './logger'
import { createSessionVerifier } from './auth/jwt'
import { createCallerResolver } from './auth/caller'
import { createRateLimiter, DatabaseTokenBuckets } from './auth/rate-limit'
import { createImageStore, LocalImageStore, type ImageStore } from './storage/images'
import { errorMapper } from './http/errors'
import { itemRoutes } from './http/items'
import { agentTokenRoutes } from './http/agent-tokens'
import { fileRoutes } from './http/files'
import { completeSpec, docsPage, openapiDocument } from './http/docs'
import { systemRoutes } from './http/system'
import { corsPolicy, observability } from './http/observability'
import { createGraphQL, graphiqlPage } from './graphql/yoga'
import { systemClock, type Clock, type Deps } from './domain/deps'
import { ChangeFollower } from './domain/change-follower'
import { withIdempotency } from './http/idempotency'
import { graphqlHandler } from './graphql/http'
import { changeRoutes } from './http/changes'
import { webhookRoutes } from './http/webhooks'
import { WebhookDispatcher } from './webhooks/dispatcher'

export interface AppDeps {
  config: Config
  db: Db
  images?: ImageStore
  logger?: Logger
  /** Tests drive time through their own clock. */
  clock?: Clock
}

/**
 * Reads JSON bodies ourselves: a size limit that also holds for chunked bodies, strict UTF-8,
 * and a 415 for content types no route accepts. Multipart is left to the item upload route.
 */
function bodyParser(config: Config) {
  return new Elysia().onParse({ as: 'global' }, async ({ request, contentType }) => {
    const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
    if (type === 'multipart/form-data') {
      try {
        return await request.formData()
      } catch {
        throw invalid('The multipart body could not be parsed.')
      }
    }
    if (type === '') {
      // No content type: fine for a body-less DELETE; anything with bytes must say what it is.
      if ((await request.arrayBuffer()).byteLength === 0) return {}
      throw new AppError('unsupported_media_type', 'Send the body as application/json.')
    }
    if (type !== 'application/json' && !type.endsWith('+json')) {
      throw new AppError('unsupported_media_type', 'Send the body as application/json.')
    }
    const bytes = await request.arrayBuffer()
    if (bytes.byteLength > config.limits.jsonBodyBytes) {
      throw new AppError('payload_too_large', `JSON bodies are limited to ${config.limits.jsonBodyBytes} bytes.`)
    }
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      throw invalid('The request body is not valid UTF-8.')
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw invalid('The request body is not valid JSON.')
    }
    // Every JSON body of this API is an object; say so here rather than per route.
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('The body must be a JSON object.')
    return value
  })
}

/** The whole service without `listen`: tests drive it through `app.handle(request)`. */
export function createApp(deps: AppDeps) {
  const { config, db } = deps
  const logger = deps.logger ?? createLogger(config.logLevel)
  const images = deps.images ?? createImageStore(config)
  const clock = deps.clock ?? systemClock
  const domain: Deps = {
    db,
    images,
    clock,
    logger,
    limits: {
      uploadBytes: config.limits.uploadBytes,
      maxClaimAttempts: config.maxClaimAttempts,
      maxWaiters: config.limits.maxWaiters,
      maxWaitersPerCaller: config.limits.maxWaitersPerCaller,
    },
    changes: new ChangeFollower(db),
    webhooks: config.push.webhooks,
  }
  const resolveCaller = createCallerResolver(db, createSessionVerifier(config.jwt), clock)
  const rateLimit = createRateLimiter(
    config.rateLimitPerMinute,
    config.rateLimitStore === 'database' ? new DatabaseTokenBuckets(db, config.rateLimitPerMinute) : undefined,
  )
  let docsHtml: string | undefined
  const yoga = createGraphQL({ deps: domain, resolveCaller, rateLimit })
  const handleGraphQL = graphqlHandler(yoga as never)

  const app = new Elysia({ normalize: false })
    .use(observability(logger))
    .use(corsPolicy(config.corsOrigins))
    .use(errorMapper(logger))
    .onRequest(({ request }) => {
      const length = Number(request.headers.get('content-length') ?? 0)
      if (length > config.limits.uploadBytes + 64 * 1024) {
        throw new AppError('payload_too_large', `Request bodies are limited to ${config.limits.uploadBytes} bytes.`)
      }
    })
    // Yoga reads its own body (and serves GraphiQL on a browser's GET). Registered before the
    // JSON body parser, which would otherwise consume the stream despite `parse: 'none'`.
    .all(
      '/graphql',
      async ({ request, server }) => {
        // Subscriptions stream over SSE: no idle timeout (Yoga sends its own keep-alive pings).
        if ((request.headers.get('accept') ?? '').includes('text/event-stream')) server?.timeout(request, 0)
        return request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html') && !new URL(request.url).search
          ? new Response(await graphiqlPage(), { headers: { 'content-type': 'text/html; charset=utf-8' } })
          : handleGraphQL(request)
      },
      { parse: 'none', detail: { hide: true } },
    )
    .use(bodyParser(config))
    .use(openapiDocument())
    .use(systemRoutes(db))
    .use(itemRoutes({ deps: domain, resolveCaller, rateLimit }))
    .use(agentTokenRoutes(domain, resolveCaller, rateLimit))
    .use(changeRoutes({ deps: domain, resolveCaller, rateLimit, keepAliveMs: config.push.keepAliveMs }))
    .use(webhookRoutes(domain, resolveCaller, rateLimit))
  if (images instanceof LocalImageStore) app.use(fileRoutes(images, clock))
  let spec: unknown
  const completedSpec = async () => (spec ??= completeSpec(await (await app.handle(new Request('http://localhost/openapi/generated.json'))).json()))
  app.get('/openapi/json', async () => Response.json(await completedSpec()), { detail: { hide: true } })
  app.get(
    '/openapi',
    async () => {
      docsHtml ??= docsPage((await completedSpec()) as never)
      return new Response(docsHtml, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
    { detail: { hide: true } },
  )
  const webhooks = new WebhookDispatcher(domain, config.push.webhooks.pollMs)
  webhooks.start()
  app.onStop(() => (domain.changes.close(), webhooks.stop()))
  // Idempotency wraps the whole app: a replay is the first answer, byte for byte. `handle` is
  // what tests call and what main.ts serves.
  const inner = (request: Request) => app.fetch(request) as Promise<Response>
  app.handle = withIdempotency(domain, resolveCaller, inner)
  return Object.assign(app, { deps: domain, webhooks })
}

export type App = ReturnType<typeof createApp>
