// A consistent copy of the live database (the server may keep running and writing).
// Usage: npm run backup -- <file>     Restore: stop the server, put <file> at DATABASE_URL's path.
import { loadConfig, prepareDataDir, redactDatabaseUrl, ConfigError } from '../src/config'
import { backupDatabase } from '../src/db/backup'

const [target] = process.argv.slice(2)
if (!target || target.startsWith('-')) {
  console.error('usage: npm run backup -- <file>')
  process.exit(2)
}
try {
  prepareDataDir()
  const config = loadConfig()
  const started = performance.now()
  const { path, bytes } = await backupDatabase(config.database, target)
  console.log(
    `backed up ${redactDatabaseUrl(config.database.url)} to ${path} (${bytes} bytes, integrity ok) in ${Math.round(performance.now() - started)} ms`,
  )
} catch (error) {
  const message =
    error instanceof ConfigError
      ? `Configuration error: ${error.message}`
      : `Backup failed: ${(error as Error).message.split('\n')[0]}`
  console.error(message)
  process.exit(1)
}
