import { createClient, type Client, type InArgs } from '@libsql/client'
import { drizzle, type LibSQLDatabase } from 'drizzle-orm/libsql'
import NativeDatabase from 'libsql'
import { chmodSync, closeSync, openSync } from 'node:fs'
import { makePrivateDir, PRIVATE_FILE_MODE } from '../private-files'
import { dirname } from 'node:path'
import * as tables from './tables'

export type QueryRow = Record<string, unknown>
/** A row as an array of column values, in SELECT order: the cheapest shape to build. */
export type RawRow = ArrayLike<unknown>

/**
 * Drizzle over @libsql/client, plus `$query` for the hot read path. Writes always go through
 * the client (batches, conditional updates). Reads on a local file go through a prepared-
 * statement cache on the same libSQL engine: @libsql/client re-prepares every statement and
 * builds each row with defineProperty, which doubled the cost of a 50-item page.
 */
export type Db = LibSQLDatabase<typeof tables> & {
  $client: Client
  $query: (sql: string, args?: InArgs) => Promise<QueryRow[]>
  $rows: (sql: string, args?: InArgs) => Promise<RawRow[]>
  /**
   * Statements in one write transaction: all apply or none. Rows come back as arrays (a
   * statement with RETURNING, or a SELECT); `rowsAffected` counts changed rows.
   */
  $batch: (statements: BatchStatement[]) => Promise<BatchResult[]>
}

export interface BatchStatement {
  sql: string
  args?: InArgs
}
export interface BatchResult {
  rows: RawRow[]
  rowsAffected: number
}

export interface DatabaseOptions {
  url: string
  authToken?: string
  syncUrl?: string
}

const BUSY_TIMEOUT_MS = 5000

function localPath(url: string): string | null {
  if (!url.startsWith('file:')) return null
  const [path = ''] = url.slice('file:'.length).split('?')
  return path && path !== ':memory:' ? path : null
}

/** A read-only view of the file through the native driver, with one prepared statement per SQL text. */
function cachedReader(path: string) {
  const native = new NativeDatabase(path, { timeout: BUSY_TIMEOUT_MS })
  // Per connection, like the client's: in WAL mode a commit is durable against a crashed
  // process at once and against power loss at the next checkpoint, without an fsync per commit.
  native.exec('PRAGMA synchronous = NORMAL')
  // SQLite's default page cache (2 MiB) is smaller than the pages a busy list walks (a 50-item
  // page with its stored renderings spans ~25 pages): reads went to the OS cache each time. Up
  // to 32 MiB, filled only as pages are read: list reads ~20 % faster (bench/), and the 1M
  // benchmark's peak RSS stays under its 200 MB bound.
  native.exec(`PRAGMA cache_size = -${32 * 1024}`)
  type Statement = ReturnType<typeof native.prepare>
  const cache = (statements: Map<string, Statement>, sql: string, raw: boolean) => {
    let stmt = statements.get(sql)
    if (!stmt) {
      stmt = native.prepare(sql)
      if (raw) stmt.raw(true)
      if (statements.size < 500) statements.set(sql, stmt)
    }
    return stmt
  }
  const objects = new Map<string, Statement>()
  const arrays = new Map<string, Statement>()
  const writes = new Map<string, Statement>()
  return {
    read: async (sql: string, args: InArgs = []) =>
      cache(objects, sql, false).all(args) as QueryRow[],
    rows: async (sql: string, args: InArgs = []) => cache(arrays, sql, true).all(args) as RawRow[],
    /**
     * The write transaction runs synchronously from BEGIN to COMMIT, so no other request of this
     * process can interleave with it (the @libsql/client trap of concurrent interactive
     * transactions cannot arise), and its statements stay prepared: a claim costs half as much.
     */
    batch: async (statements: BatchStatement[]): Promise<BatchResult[]> => {
      native.exec('BEGIN IMMEDIATE')
      try {
        const results = statements.map(({ sql, args = [] }) => {
          let stmt = writes.get(sql)
          if (!stmt) {
            stmt = native.prepare(sql)
            if (stmt.reader) stmt.raw(true)
            if (writes.size < 500) writes.set(sql, stmt)
          }
          if (stmt.reader) {
            const rows = stmt.all(args) as RawRow[]
            return { rows, rowsAffected: rows.length }
          }
          return { rows: [], rowsAffected: Number((stmt.run(args) as { changes: number }).changes) }
        })
        native.exec('COMMIT')
        return results
      } catch (error) {
        if (native.inTransaction) native.exec('ROLLBACK')
        throw error
      }
    },
    close: () => native.close(),
  }
}

/**
 * Opens the libSQL database. File databases get WAL (readers never block the writer) and a
 * busy timeout so several server processes can share one file.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  const path = localPath(options.url)
  if (path) {
    // Owner-only: a directory we create is 0700, the database file 0600 (SQLite gives its -wal
    // and -shm files the database file's mode). chmod after creating, since the umask applies.
    makePrivateDir(dirname(path))
    closeSync(openSync(path, 'a', PRIVATE_FILE_MODE))
    chmodSync(path, PRIVATE_FILE_MODE)
  }
  const client = createClient({
    url: options.url,
    authToken: options.authToken,
    syncUrl: options.syncUrl,
    timeout: BUSY_TIMEOUT_MS,
  })
  if (options.url.startsWith('file:')) {
    await client.execute('PRAGMA journal_mode = WAL')
    await client.execute('PRAGMA synchronous = NORMAL')
  }
  if (options.syncUrl) await client.sync()

  const db = drizzle(client, { schema: tables }) as Db
  // An embedded replica keeps its sync state per connection, so it reads through the client.
  if (path && !options.syncUrl) {
    const reader = cachedReader(path)
    db.$query = reader.read
    db.$rows = reader.rows
    db.$batch = reader.batch
    const close = client.close.bind(client)
    client.close = () => {
      reader.close()
      close()
    }
  } else {
    db.$query = async (sql, args = []) =>
      (await client.execute({ sql, args })).rows as unknown as QueryRow[]
    // The client's rows are array-like too.
    db.$rows = async (sql, args = []) => (await client.execute({ sql, args })).rows
    db.$batch = async (statements) =>
      (
        await client.batch(
          statements.map(({ sql, args = [] }) => ({ sql, args })),
          'write',
        )
      ).map((r) => ({
        rows: r.rows,
        rowsAffected: r.rowsAffected,
      }))
  }
  return db
}
