// Writes the published contract files from the code: schema/openapi.json and schema/schema.graphql. test/generated.test.ts fails when the checked-in files drift.
import { writeFileSync, mkdirSync } from 'node:fs'
import { generatedContract } from './contract'

mkdirSync('schema', { recursive: true })
for (const [path, text] of Object.entries(await generatedContract())) {
  writeFileSync(path, text)
  console.log(`wrote ${path}`)
}
