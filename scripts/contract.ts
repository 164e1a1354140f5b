import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { openDatabase } from '../src/db/client'
import { createApp } from '../src/app'
import { createLogger } from '../src/logger'
import { printedSchema } from '../src/graphql/schema'

/** The generated contract files, keyed by their path in the repository. */
export async function generatedContract(): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'saved-contract-'))
  try {
    const config = loadConfig({
      JWT_SECRET: 'x'.repeat(32),
      DATA_DIR: dir,
      DATABASE_URL: ':memory:',
    })
    const db = await openDatabase(config.database)
    const app = createApp({ config, db, logger: createLogger('silent') })
    const spec = await (await app.handle(new Request('http://localhost/openapi/json'))).json()
    db.$client.close()
    return {
      'schema/openapi.json': JSON.stringify(spec, null, 2) + '\n',
      'schema/schema.graphql': printedSchema(),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
