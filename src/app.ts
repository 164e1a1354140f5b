import { Elysia } from 'elysia'
import type { Config } from './config'
import type { Db } from './db/client'
import { AppError, invalid } from './errors'
import { createLogger, type Logger } from './logger'
import { createSessionVerifier } from './auth/jwt'
import { createCallerResolver } from './auth/caller'
import { createRateLimiter, DatabaseTokenBuckets, limitAuthFailures } from './auth/rate-limit'
import { clientAddress } from './http/auth'
import { readBody } from './http/body'
import { routableUrl } from './http/observability'
import type { CallerResolver } from './auth/caller'
import type { Caller } from './domain/caller'
import { createImageStore, LocalImageStore, type ImageStore } from './storage/images'
import { errorMapper } from './http/errors'
import { itemRoutes } from './http/items'
import { agentTokenRoutes } from './http/agent-tokens'
import { fileRoutes } from './http/files'
import { completeSpec, generatedDocument } from './http/docs'
import { referenceRoutes } from './http/reference'
import { markdownNegotiation } from './http/negotiation'
import { systemRoutes } from './http/system'
import { corsPolicy, logRequests, observability } from './http/observability'
import { createGraphQL, graphiqlPage } from './graphql/yoga'
import { systemClock, type Clock, type Deps } from './domain/deps'
import { ChangeFollower } from './domain/change-follower'
import { withIdempotency } from './http/idempotency'
import { graphqlHandler } from './graphql/http'
import { mcpRoutes } from './mcp/http'
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
 * Reads bodies ourselves: a size limit that also holds for chunked bodies, a deadline for bodies
 * that trickle in, strict UTF-8, and a 415 for content types no route accepts. Every route that
 * takes a body is under /api/ and needs a caller, so `authenticate` runs first: no body is read
 * or parsed for a caller who would get a 401 (CONTRACT 10).
 */
function bodyParser(config: Config, authenticate: (request: Request) => Promise<unknown>) {
  const { jsonBodyBytes, uploadBytes, bodyTimeoutMs } = config.limits
  return new Elysia().onParse({ as: 'global' }, async ({ request, contentType }) => {
    await authenticate(request)
    const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
    if (type === 'multipart/form-data') {
      // The image plus a little room for the text fields; the domain checks the image itself.
      const bytes = await readBody(request, uploadBytes + 64 * 1024, bodyTimeoutMs)
      try {
        return await new Response(bytes as Uint8Array<ArrayBuffer>, {
          headers: { 'content-type': request.headers.get('content-type') ?? '' },
        }).formData()
      } catch {
        throw invalid('The multipart body could not be parsed.')
      }
    }
    if (type === '') {
      // No content type: fine for a body-less DELETE; anything with bytes must say what it is.
      if ((await readBody(request, jsonBodyBytes, bodyTimeoutMs)).byteLength === 0) return {}
      throw new AppError('unsupported_media_type', 'Send the body as application/json.')
    }
    if (type !== 'application/json' && !type.endsWith('+json')) {
      throw new AppError('unsupported_media_type', 'Send the body as application/json.')
    }
    const bytes = await readBody(request, jsonBodyBytes, bodyTimeoutMs)
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
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw invalid('The body must be a JSON object.')
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
      maxItemsPerUser: config.limits.maxItemsPerUser,
      maxImageBytesPerUser: config.limits.maxImageBytesPerUser,
      maxClaimAttempts: config.maxClaimAttempts,
      maxWaiters: config.limits.maxWaiters,
      maxWaitersPerCaller: config.limits.maxWaitersPerCaller,
    },
    changes: new ChangeFollower(db),
    webhooks: config.push.webhooks,
  }
  const shared = config.rateLimitStore === 'database'
  const verifyCaller = limitAuthFailures(
    createCallerResolver(db, createSessionVerifier(config.jwt), clock),
    config.authFailuresPerMinute,
    shared ? new DatabaseTokenBuckets(db, config.authFailuresPerMinute) : undefined,
  )
  // One resolution per request: the body parser authenticates before reading, the route's
  // authentication step (and GraphQL) reuse the answer rather than verify twice.
  const callers = new WeakMap<Request, Promise<Caller>>()
  const resolveCaller: CallerResolver = (authorization, client, request) => {
    if (!request) return verifyCaller(authorization, client)
    let caller = callers.get(request)
    if (!caller) callers.set(request, (caller = verifyCaller(authorization, client)))
    return caller
  }
  const authenticateApiRequest = async (request: Request) => {
    if (!(routableUrl(request)?.pathname ?? '').startsWith('/api/')) return
    await resolveCaller(
      request.headers.get('authorization'),
      clientAddress(app.server, request),
      request,
    )
  }
  const rateLimit = createRateLimiter(
    config.rateLimitPerMinute,
    shared ? new DatabaseTokenBuckets(db, config.rateLimitPerMinute) : undefined,
  )
  const yoga = createGraphQL({
    deps: domain,
    resolveCaller,
    rateLimit,
    introspection: config.graphqlIntrospection,
  })
  const handleGraphQL = graphqlHandler(yoga as never, {
    resolveCaller,
    maxBodyBytes: config.limits.jsonBodyBytes,
    bodyTimeoutMs: config.limits.bodyTimeoutMs,
  })

  const app = new Elysia({ normalize: false, handler: { standardHostname: false } })
    .use(observability())
    .use(corsPolicy(config.corsOrigins))
    .use(errorMapper(logger))
    .onRequest(({ request }) => {
      const length = Number(request.headers.get('content-length') ?? 0)
      if (length > config.limits.uploadBytes + 64 * 1024) {
        throw new AppError(
          'payload_too_large',
          `Request bodies are limited to ${config.limits.uploadBytes} bytes.`,
        )
      }
    })
    // Yoga reads its own body (and serves GraphiQL on a browser's GET). Registered before the
    // JSON body parser, which would otherwise consume the stream despite `parse: 'none'`.
    .all(
      '/graphql',
      async ({ request, server }) => {
        // Subscriptions stream over SSE: no idle timeout (Yoga sends its own keep-alive pings).
        if ((request.headers.get('accept') ?? '').includes('text/event-stream'))
          server?.timeout(request, 0)
        return config.graphiql &&
          request.method === 'GET' &&
          (request.headers.get('accept') ?? '').includes('text/html') &&
          !new URL(request.url).search
          ? (await graphiqlPage()).respond(request)
          : handleGraphQL(request, clientAddress(server, request))
      },
      { parse: 'none', detail: { hide: true } },
    )
    // MCP reads its own body too (the SDK's transport), so it is mounted before the parser as well.
    .use(
      mcpRoutes({
        deps: domain,
        resolveCaller,
        rateLimit,
        maxBodyBytes: config.limits.jsonBodyBytes,
        bodyTimeoutMs: config.limits.bodyTimeoutMs,
      }),
    )
    .use(bodyParser(config, authenticateApiRequest))
    .use(markdownNegotiation())
    .use(systemRoutes(db))
    .use(itemRoutes({ deps: domain, resolveCaller, rateLimit }))
    .use(agentTokenRoutes(domain, resolveCaller, rateLimit))
    .use(
      changeRoutes({
        deps: domain,
        resolveCaller,
        rateLimit,
        keepAliveMs: config.push.keepAliveMs,
      }),
    )
    .use(webhookRoutes(domain, resolveCaller, rateLimit))
  if (images instanceof LocalImageStore) app.use(fileRoutes(images, clock))
  // The document is built on first request, when every route (file routes included) is registered.
  app.use(
    referenceRoutes(() => completeSpec(generatedDocument(app), { publicUrl: config.publicUrl })),
  )
  const webhooks = new WebhookDispatcher(domain, config.push.webhooks.pollMs)
  webhooks.start()
  app.onStop(() => (domain.changes.close(), webhooks.stop()))
  // Idempotency wraps the whole app: a replay is the first answer, byte for byte. `handle` is
  // what tests call and what main.ts serves.
  const inner = (request: Request) => app.fetch(request) as Promise<Response>
  app.handle = logRequests(
    logger,
    withIdempotency(
      domain,
      (authorization, request) => resolveCaller(authorization, clientAddress(app.server, request)),
      { maxBytes: config.limits.uploadBytes + 64 * 1024, timeoutMs: config.limits.bodyTimeoutMs },
      inner,
    ),
  )
  return Object.assign(app, { deps: domain, webhooks })
}

export type App = ReturnType<typeof createApp>
