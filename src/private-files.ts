import { chmodSync, mkdirSync } from 'node:fs'
import { chmod, mkdir } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'

/** Owner-only modes for what the service keeps on disk: secrets, the database, images. */
export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

/** Every directory from `dir` up to `first` (the first one mkdir created), deepest first. */
function created(dir: string, first: string): string[] {
  const dirs: string[] = []
  const top = resolve(first)
  for (let current = resolve(dir); ; current = dirname(current)) {
    dirs.push(current)
    if (current === top || dirname(current) === current) return dirs
  }
}

/**
 * Creates `dir` and any missing parents owner-only (0700), with chmod after mkdir because the
 * umask can only take bits away. A directory that already exists is left as it is: it may be
 * shared (DATA_DIR=/srv, say), and it is not ours to change.
 */
export function makePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  if (first !== undefined) for (const d of created(dir, first)) chmodSync(d, PRIVATE_DIR_MODE)
}

export async function makePrivateDirAsync(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  if (first !== undefined) for (const d of created(dir, first)) await chmod(d, PRIVATE_DIR_MODE)
}
