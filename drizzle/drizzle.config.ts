import { defineConfig } from 'drizzle-kit'

// Migrations are generated from src/db/tables.ts by `npm run db:generate`; never hand-edited.
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/tables.ts',
  out: './drizzle/migrations',
})
