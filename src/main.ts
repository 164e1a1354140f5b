import { loadConfig, ConfigError } from './config'
import { openDatabase } from './db/client'
import { migrateDatabase } from './db/migrate'
import { createApp } from './app'
import { createLogger } from './logger'

async function main() {
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
  const logger = createLogger(config.logLevel)
  const db = await openDatabase(config.database)
  await migrateDatabase(db)
  const app = createApp({ config, db, logger })
  app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: config.limits.uploadBytes + 1024 * 1024 })

  const base = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${app.server?.port}`
  logger.info('listening', {
    api: `${base}/api/saved/items`,
    openapi: `${base}/openapi`,
    graphql: `${base}/graphql`,
    database: config.database.url.replace(/\/\/[^@]*@/, '//'),
    token_help: config.jwtSource === 'dev-file' ? 'npm run token -- <user-id> prints a session JWT' : undefined,
  })

  // Graceful shutdown: stop accepting, let in-flight requests finish, then close the database.
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info('shutting down', { signal })
    await app.server?.stop(false)
    db.$client.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

await main()
