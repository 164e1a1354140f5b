import { createClient } from '@libsql/client'
import { chmodSync, existsSync, renameSync, rmSync, statSync } from 'node:fs'
import { PRIVATE_FILE_MODE } from '../private-files'
import { resolve } from 'node:path'
import type { DatabaseOptions } from './client'

export interface BackupResult {
  path: string
  bytes: number
}

/**
 * A consistent copy of a live local database, online: `VACUUM INTO` reads one snapshot (a read
 * transaction; in WAL mode writers carry on meanwhile) and writes a compact new database. The
 * copy is written beside the target and renamed into place only once it passed
 * `PRAGMA integrity_check`, so a half-written file never carries the target's name. Owner-only
 * (0600), like the database itself.
 */
export async function backupDatabase(
  options: DatabaseOptions,
  target: string,
): Promise<BackupResult> {
  if (!options.url.startsWith('file:')) {
    throw new Error(
      'only a local file database can be copied this way; for Turso use its point-in-time restore or `turso db shell <db> .dump`',
    )
  }
  const path = resolve(target)
  if (existsSync(path)) throw new Error(`${path} already exists; choose a new file`)
  const partial = `${path}.partial`
  rmSync(partial, { force: true })
  const source = createClient({ url: options.url, authToken: options.authToken })
  try {
    await source.execute('PRAGMA busy_timeout = 5000')
    await source.execute({ sql: 'VACUUM INTO ?', args: [partial] })
  } finally {
    source.close()
  }
  chmodSync(partial, PRIVATE_FILE_MODE)
  const copy = createClient({ url: `file:${partial}` })
  try {
    const check = await copy.execute('PRAGMA integrity_check')
    const verdict = String(check.rows[0]?.[0] ?? '')
    if (verdict !== 'ok') throw new Error(`the copy failed its integrity check: ${verdict}`)
  } catch (error) {
    copy.close()
    rmSync(partial, { force: true })
    throw error
  }
  copy.close()
  renameSync(partial, path)
  return { path, bytes: statSync(path).size }
}
