import { Elysia, t } from 'elysia'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import type { Deps } from '../domain/deps'
import {
  createWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  listWebhooks,
} from '../domain/webhooks'
import { authentication, secured } from './auth'
import { checkBody } from './body'
import { jsonBody } from './items'
import {
  CreateWebhookBody,
  CreatedWebhookSchema,
  DeliveryListSchema,
  WebhookListSchema,
} from './push-schemas'
import { deliveryJson, webhookJson } from './push-serialize'
import { IdParams, documented, errors } from './schemas'

/** `/api/saved/webhooks`: signed-in sessions manage their webhook endpoints (agent tokens: 401 session_required). */
export function webhookRoutes(
  deps: Deps,
  resolveCaller: CallerResolver,
  rateLimit: CallerRateLimiter,
) {
  return new Elysia({ prefix: '/api/saved/webhooks' })
    .use(authentication(resolveCaller, rateLimit))
    .get(
      '',
      async ({ caller }) => ({ webhooks: (await listWebhooks(deps, caller)).map(webhookJson) }),
      {
        detail: {
          responses: documented({ 200: WebhookListSchema, ...errors(401, 429) }),
          summary: 'List webhook endpoints (signed-in session only)',
          tags: ['webhooks'],
          ...secured,
        },
      },
    )
    .post(
      '',
      async ({ caller, body, set }) => {
        const b = checkBody(CreateWebhookBody, body)
        const { secret, ...created } = await createWebhook(deps, caller, {
          url: b.url,
          actions: b.actions,
          description: b.description,
        })
        set.status = 201
        // The answer holds the signing secret: no cache may keep it.
        set.headers['cache-control'] = 'no-store'
        return { ...webhookJson(created), secret }
      },
      {
        detail: {
          responses: documented({
            201: CreatedWebhookSchema,
            ...errors(400, 401, 409, 413, 415, 422, 429),
          }),
          summary: 'Register a webhook endpoint; the signing secret is returned once',
          description:
            'Each matching change is POSTed as {type: "item.<action>", timestamp, data: <change record>}, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). At most 10 per user.',
          tags: ['webhooks'],
          ...secured,
          requestBody: jsonBody(CreateWebhookBody),
        },
      },
    )
    .delete(
      '/:id',
      async ({ caller, params, set }) => {
        await deleteWebhook(deps, caller, params.id)
        set.status = 204
      },
      {
        params: IdParams,
        detail: {
          responses: documented({
            204: t.Void({ description: 'Deleted; nothing more is delivered to it.' }),
            ...errors(400, 401, 404, 409, 422, 429),
          }),
          summary: 'Delete a webhook endpoint',
          tags: ['webhooks'],
          ...secured,
        },
      },
    )
    .get(
      '/:id/deliveries',
      async ({ caller, params }) => ({
        deliveries: (await listWebhookDeliveries(deps, caller, params.id)).map(deliveryJson),
      }),
      {
        params: IdParams,
        detail: {
          responses: documented({ 200: DeliveryListSchema, ...errors(400, 401, 404, 429) }),
          summary: "An endpoint's recent delivery attempts, newest first",
          tags: ['webhooks'],
          ...secured,
        },
      },
    )
}
