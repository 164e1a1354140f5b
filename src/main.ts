import { loadConfig, prepareDataDir, ConfigError, redactDatabaseUrl, type Config } from './config'
import { openDatabase } from './db/client'
import { migrateDatabase } from './db/migrate'
import { createApp } from './app'
import { createLogger } from './logger'
import { envelope } from './errors'

function configOrExit(): Config {
  try {
    prepareDataDir()
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
}

async function main() {
  const config = configOrExit()
  const logger = createLogger(config.logLevel)
  let db: Awaited<ReturnType<typeof openDatabase>>
  try {
    db = await openDatabase(config.database)
    // Migrate once, before any worker starts, so workers never race on the schema.
    await migrateDatabase(db)
  } catch (error) {
    // One line, and never the URL's credentials (a driver may quote the URL in its message).
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
    const message = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)
    console.error(
      `Database error: ${redactDatabaseUrl(config.database.url)}: ${(message.split('\n')[0] ?? '').split(config.database.url).join('[DATABASE_URL]')}`,
    )
    process.exit(1)
  }

  if (config.workers > 1 && !process.env.SAVED_WORKER) {
    db.$client.close()
    await supervise(config)
    return
  }
  const app = createApp({ config, db, logger })
  // Served through `app.handle`, which wraps Elysia's handler with idempotency (src/app.ts).
  // Elysia reads the server (client addresses) from `app.server`.
  app.server = Bun.serve({
    port: config.port,
    hostname: config.host,
    reusePort: config.workers > 1,
    // The app refuses oversized bodies itself, in the error envelope: by Content-Length before
    // reading, and while reading for chunked ones. Bun's own bare 413 is only a backstop.
    maxRequestBodySize: Math.max(256 * 1024 * 1024, config.limits.uploadBytes * 4),
    // Seconds a connection may stay silent. Above the longest long poll (wait_seconds ≤ 60); a
    // body that keeps trickling is cut off by BODY_TIMEOUT_SECONDS in the body reader.
    idleTimeout: 75,
    // Never Bun's development error page (source and absolute paths), whatever NODE_ENV says.
    development: false,
    // Anything that escapes the app's own error mapper: one log line and the envelope, no stack.
    error(error) {
      logger.error('unhandled error', {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      })
      return Response.json(envelope('internal', 'Something went wrong on our side.'), {
        status: 500,
      })
    },
    fetch: (request) => app.handle(request),
  }) as unknown as typeof app.server

  if (!process.env.SAVED_WORKER || process.env.SAVED_WORKER === '1') {
    const base = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${app.server?.port}`
    logger.info('listening', {
      api: `${base}/api/saved/items`,
      openapi: `${base}/openapi`,
      graphql: `${base}/graphql`,
      workers: config.workers,
      database: redactDatabaseUrl(config.database.url),
      token_help:
        config.jwtSource === 'dev-file'
          ? 'npm run token -- <user-id> prints a session JWT'
          : undefined,
    })
  }

  // Graceful shutdown: stop accepting, let in-flight requests finish, then close the database.
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info('shutting down', { signal })
    await app.server?.stop(false)
    app.deps.changes.close()
    db.$client.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

/** WORKERS=n: n copies of this process share the port (SO_REUSEPORT) and the database file. */
async function supervise(config: Config) {
  if (config.port === 0) {
    console.error('Configuration error: WORKERS: needs a fixed PORT, not 0')
    process.exit(1)
  }
  const children = Array.from({ length: config.workers }, (_, i) =>
    Bun.spawn([process.execPath, ...process.argv.slice(1)], {
      env: { ...process.env, SAVED_WORKER: String(i + 1) },
      stdio: ['inherit', 'inherit', 'inherit'],
    }),
  )
  const forward = (signal: NodeJS.Signals) => () => {
    for (const child of children) child.kill(signal)
  }
  process.on('SIGTERM', forward('SIGTERM'))
  process.on('SIGINT', forward('SIGINT'))
  const codes = await Promise.all(children.map((c) => c.exited))
  process.exit(Math.max(...codes))
}

await main()
