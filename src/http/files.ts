import { Elysia, t } from 'elysia'
import { AppError, notFound } from '../errors'
import type { LocalImageStore } from '../storage/images'
import type { Clock } from '../domain/deps'
import { documented, errors } from './schemas'

/**
 * Serves locally stored images at HMAC-signed links. No bearer token: the signature is the
 * credential. Altered or expired links are 403.
 */
export function fileRoutes(store: LocalImageStore, clock: Clock) {
  return new Elysia().get(
    '/files/images/:key',
    async ({ params, query }) => {
      const verdict = store.signer.verify(
        params.key,
        query.expires ?? '',
        query.signature ?? '',
        clock.now(),
      )
      if (verdict !== 'ok') {
        throw new AppError(
          'forbidden',
          verdict === 'expired' ? 'This image link has expired.' : 'This image link is not valid.',
        )
      }
      if (!/^itm_[A-Za-z0-9_-]+\.(png|jpeg|gif|webp)$/.test(params.key)) throw notFound('Image')
      const file = Bun.file(store.path(params.key))
      if (!(await file.exists())) throw notFound('Image')
      return new Response(file, {
        headers: {
          'content-type': `image/${params.key.split('.').pop()}`,
          'cache-control': 'private, max-age=300',
          'x-content-type-options': 'nosniff',
        },
      })
    },
    {
      params: t.Object({ key: t.String({ maxLength: 120 }) }),
      query: t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) }),
      detail: {
        responses: documented({ 200: t.File() as never, ...errors(403, 404) }),
        summary: 'A stored image, through a signed link',
        tags: ['files'],
      },
    },
  )
}
