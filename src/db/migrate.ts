import { migrate } from 'drizzle-orm/libsql/migrator'
import { fileURLToPath } from 'node:url'
import type { Db } from './client'

const MIGRATIONS = fileURLToPath(new URL('../../drizzle/migrations', import.meta.url))

/** Applies the drizzle-kit migrations in `drizzle/migrations`; idempotent. */
export async function migrateDatabase(db: Db): Promise<void> {
  await migrate(db, { migrationsFolder: MIGRATIONS })
}
