import { describe, expect, test } from 'bun:test'
import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { generatedContract } from '../scripts/contract'

describe('generated files do not drift from the code', () => {
  test('schema/ matches what scripts/print-schema.ts generates (run `npm run schema:print`)', async () => {
    for (const [path, text] of Object.entries(await generatedContract())) {
      expect({ path, text: readFileSync(path, 'utf8') }).toEqual({ path, text })
    }
  })

  test('drizzle/migrations is up to date with src/db/tables.ts (run `npm run db:generate`)', async () => {
    // drizzle-kit only takes paths relative to the working directory.
    const dir = `.drift-check-${process.pid}-${Date.now()}`
    try {
      cpSync('drizzle/migrations', join(dir, 'migrations'), { recursive: true })
      const before = readdirSync(join(dir, 'migrations')).sort()
      const proc = Bun.spawn(
        [
          'node',
          'node_modules/drizzle-kit/bin.cjs',
          'generate',
          '--dialect',
          'sqlite',
          '--schema',
          './src/db/tables.ts',
          '--out',
          join(dir, 'migrations'),
        ],
        { stdout: 'pipe', stderr: 'pipe' },
      )
      const code = await proc.exited
      const output =
        (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text())
      expect(code).toBe(0)
      expect(output).toContain('No schema changes')
      expect(readdirSync(join(dir, 'migrations')).sort()).toEqual(before)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
