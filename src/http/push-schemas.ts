import { t, type TSchema } from 'elysia'
import type { TUnsafe } from '@sinclair/typebox'
import { CHANGE_ACTIONS } from '../domain/change-record'
import { ClaimantSchema, ItemSchema } from './schemas'

// The JSON schemas of the change feed, live events and webhooks (CONTRACT 8): they check the
// shape of requests and feed the OpenAPI document; the domain checks what values mean.

const enumOf = <const T extends readonly [string, ...string[]]>(values: T, description?: string) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    description ? { description } : {},
  ) as unknown as TUnsafe<T[number]>
const nullable = <S extends TSchema>(schema: S) => t.Union([schema, t.Null()])
const timestamp = (description?: string) => t.String({ format: 'date-time', description })

export const ChangeSchema = t.Object(
  {
    seq: t.String({ description: 'Only grows, in the order the database applied the changes.' }),
    at: timestamp(),
    item_id: t.String(),
    action: enumOf(CHANGE_ACTIONS),
    actor: nullable(ClaimantSchema),
    item: nullable(ItemSchema),
  },
  {
    description:
      'One change to one of your items; `item` is the item as it is now (null once deleted).',
  },
)

export const ChangePageSchema = t.Object({
  changes: t.Array(ChangeSchema),
  next_cursor: t.String({
    description: 'Always present: pass as `after` to resume exactly after this page.',
  }),
})

export const ChangesQuery = t.Object({
  after: t.Optional(
    t.String({ description: 'A next_cursor (or a seq). Absent: from the first record.' }),
  ),
  limit: t.Optional(t.Integer({ description: '1 to 200; default 100.' })),
})

export const EventsQuery = t.Object({
  after: t.Optional(
    t.String({
      description:
        'Resume after this seq (Last-Event-ID takes precedence). Absent: from the next change.',
    }),
  ),
  inbox: t.Optional(
    enumOf(['true', 'false'] as const, 'true: only items with a requested action.'),
  ),
})

export const WEBHOOK_ACTIONS = CHANGE_ACTIONS

export const CreateWebhookBody = t.Object(
  {
    url: t.String({
      description: 'http(s); private, loopback, link-local and multicast addresses are refused.',
    }),
    actions: t.Optional(
      t.Array(enumOf(CHANGE_ACTIONS), {
        description: 'The actions to deliver; absent or empty: all.',
      }),
    ),
    description: t.Optional(nullable(t.String({ description: 'At most 500 characters.' }))),
  },
  { additionalProperties: false },
)

const webhookFields = {
  id: t.String(),
  url: t.String(),
  actions: t.Array(enumOf(CHANGE_ACTIONS), { description: 'Empty: every action.' }),
  description: nullable(t.String()),
  created_at: timestamp(),
  enabled: t.Boolean({
    description: 'False once the receiver answered 410 or 50 deliveries in a row failed.',
  }),
  disabled_reason: nullable(t.String()),
}
export const WebhookSchema = t.Object(webhookFields)
export const WebhookListSchema = t.Object({ webhooks: t.Array(WebhookSchema) })
export const CreatedWebhookSchema = t.Object({
  ...webhookFields,
  secret: t.String({ description: 'The signing secret (whsec_…), shown once.' }),
})

export const DeliverySchema = t.Object({
  id: t.String(),
  seq: t.String(),
  action: enumOf(CHANGE_ACTIONS),
  attempt: t.Integer({ minimum: 1 }),
  status: enumOf(
    ['succeeded', 'retrying', 'failed'] as const,
    'failed: given up (or the endpoint was disabled).',
  ),
  response_status: nullable(t.Integer()),
  at: timestamp(),
  next_attempt_at: nullable(timestamp()),
})
export const DeliveryListSchema = t.Object({ deliveries: t.Array(DeliverySchema) })
