import { Elysia, t } from 'elysia'
import type { Db } from '../db/client'
import { AppError } from '../errors'
import { documented, errors } from './schemas'

/** Liveness and readiness; no authentication. */
export function systemRoutes(db: Db) {
  return new Elysia()
    .get('/health', () => ({ status: 'ok' as const }), {
      detail: {
        responses: documented({ 200: t.Object({ status: t.Literal('ok') }) }),
        summary: 'Liveness: the process answers',
        tags: ['system'],
      },
    })
    .get(
      '/ready',
      async () => {
        try {
          await db.$client.execute('SELECT 1')
        } catch {
          throw new AppError('internal', 'The database is not reachable.')
        }
        return { status: 'ready' as const }
      },
      {
        detail: {
          responses: documented({ 200: t.Object({ status: t.Literal('ready') }), ...errors() }),
          summary: 'Readiness: the database answers',
          tags: ['system'],
        },
      },
    )
}
