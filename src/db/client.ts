import { createClient, type Client } from '@libsql/client'
import { drizzle, type LibSQLDatabase } from 'drizzle-orm/libsql'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import * as tables from './tables'

export type Db = LibSQLDatabase<typeof tables> & { $client: Client }

export interface DatabaseOptions {
  url: string
  authToken?: string
  syncUrl?: string
}

/**
 * Opens the libSQL database. File databases get WAL (readers never block the writer) and a
 * busy timeout so several server processes can share one file.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  if (options.url.startsWith('file:')) {
    const path = options.url.slice('file:'.length).split('?')[0]!
    if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  }
  const client = createClient({
    url: options.url,
    authToken: options.authToken,
    syncUrl: options.syncUrl,
    timeout: 5000,
  })
  if (options.url.startsWith('file:')) {
    await client.execute('PRAGMA journal_mode = WAL')
    await client.execute('PRAGMA synchronous = NORMAL')
  }
  if (options.syncUrl) await client.sync()
  return drizzle(client, { schema: tables }) as Db
}
