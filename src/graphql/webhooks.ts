import { builder } from './builder'
import { ChangeActionEnum } from './changes'
import {
  createWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  listWebhooks,
  type Webhook,
  type WebhookAttempt,
} from '../domain/webhooks'

// Webhook endpoints in GraphQL (CONTRACT 8): the same domain functions as /api/saved/webhooks,
// session only.

export const WebhookRef = builder.objectRef<Webhook>('Webhook').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    actions: t.field({
      type: [ChangeActionEnum],
      description: 'Empty: every action.',
      resolve: (w) => w.actions,
    }),
    description: t.exposeString('description', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    enabled: t.exposeBoolean('enabled', {
      description: 'False once the receiver answered 410 or 50 attempts in a row failed.',
    }),
    disabledReason: t.exposeString('disabledReason', { nullable: true }),
  }),
})

const CreatedWebhookRef = builder
  .objectRef<{ webhook: Webhook; secret: string }>('CreatedWebhook')
  .implement({
    fields: (t) => ({
      webhook: t.field({ type: WebhookRef, resolve: (c) => c.webhook }),
      secret: t.exposeString('secret', {
        description: 'The signing secret (whsec_…), shown once.',
      }),
    }),
  })

const DeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  values: {
    SUCCEEDED: { value: 'succeeded' },
    RETRYING: { value: 'retrying' },
    FAILED: { value: 'failed' },
  } as const,
})

const WebhookDeliveryRef = builder.objectRef<WebhookAttempt>('WebhookDelivery').implement({
  description: 'One delivery attempt.',
  fields: (t) => ({
    id: t.exposeID('id'),
    seq: t.exposeString('seq'),
    action: t.field({ type: ChangeActionEnum, resolve: (a) => a.action }),
    attempt: t.exposeInt('attempt'),
    status: t.field({ type: DeliveryStatusEnum, resolve: (a) => a.status }),
    responseStatus: t.exposeInt('responseStatus', { nullable: true }),
    at: t.expose('at', { type: 'DateTime' }),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
  }),
})

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  fields: (t) => ({
    url: t.string({
      required: true,
      description: 'http(s); private, loopback, link-local and multicast addresses are refused.',
    }),
    actions: t.field({ type: [ChangeActionEnum], description: 'Absent or empty: every action.' }),
    description: t.string(),
  }),
})

builder.queryFields((t) => ({
  webhooks: t.field({
    type: [WebhookRef],
    description: 'Your webhook endpoints (signed-in session only).',
    resolve: (_root, _args, ctx) => listWebhooks(ctx.deps, ctx.caller),
  }),
  webhookDeliveries: t.field({
    type: [WebhookDeliveryRef],
    description: "An endpoint's recent delivery attempts, newest first (signed-in session only).",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, ctx) => listWebhookDeliveries(ctx.deps, ctx.caller, String(id)),
  }),
}))

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreatedWebhookRef,
    description:
      'Registers an endpoint; each matching change is POSTed to it, signed per Standard Webhooks.',
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { secret, ...webhook } = await createWebhook(ctx.deps, ctx.caller, {
        url: input.url,
        actions: input.actions ?? undefined,
        description: input.description ?? undefined,
      })
      return { webhook, secret }
    },
  }),
  deleteWebhook: t.boolean({
    description: 'Deletes an endpoint; nothing more is delivered to it. True when it was deleted.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteWebhook(ctx.deps, ctx.caller, String(id))
      return true
    },
  }),
}))
