import { t, type TSchema } from 'elysia'
import type { TUnsafe } from '@sinclair/typebox'
import {
  CLAIM_STATUS_FILTERS,
  CLAIM_STATUSES,
  EXTRACTION_STATUSES,
  ITEM_TYPES,
  REQUESTED_ACTIONS,
  WORKFLOW_STATUSES,
} from '../domain/item'
import { AGENT_TOKEN_SCOPES } from '../domain/caller'
import { LIMITS } from '../domain/rules'
import { ERROR_CODES } from '../errors'

// The JSON schemas of every REST request and answer. They check the SHAPE of requests (types,
// enums, unknown properties) and feed the OpenAPI document; the domain checks what values mean
// (ranges, lengths, combinations), once for every front end.

// A union of literals, not t.UnionEnum: Elysia fills an absent optional UnionEnum query
// parameter with its first value, which would silently filter every list.
const enumOf = <const T extends readonly [string, ...string[]]>(values: T, description?: string) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    description ? { description } : {},
  ) as unknown as TUnsafe<T[number]>
const nullable = <S extends TSchema>(schema: S) => t.Union([schema, t.Null()])
const timestamp = (description?: string) => t.String({ format: 'date-time', description })
/**
 * A range the DOMAIN checks (one rule, one message, every front end): documented for clients as
 * minimum/maximum (src/http/docs.ts renames these keys), but not enforced by TypeBox.
 */
const range = (min: number, max: number) => ({ 'x-minimum': min, 'x-maximum': max })

export const ErrorSchema = t.Object(
  {
    error: t.Object({
      code: enumOf(
        Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]],
      ),
      message: t.String(),
      details: t.Optional(t.Unknown()),
    }),
  },
  { description: 'The error envelope of every failure.' },
)

export const ClaimantSchema = t.Object({
  kind: enumOf(['agent_token', 'user'] as const),
  id: t.String(),
  name: nullable(t.String()),
})

const itemFields = {
  id: t.String({ description: 'Opaque, unique, URL-safe.' }),
  type: enumOf(ITEM_TYPES),
  status: enumOf(EXTRACTION_STATUSES, 'Extraction status.'),
  workflow_status: enumOf(WORKFLOW_STATUSES),
  title: nullable(t.String()),
  summary: nullable(t.String()),
  action_note: nullable(t.String()),
  resolution_note: nullable(t.String()),
  tags: t.Array(t.String()),
  requested_action: nullable(enumOf(REQUESTED_ACTIONS)),
  destination_kind: nullable(t.String()),
  destination_name: nullable(t.String()),
  claim_status: enumOf(
    CLAIM_STATUSES,
    'As seen by the caller: claimed means held by someone else.',
  ),
  claimed_by: nullable(ClaimantSchema),
  lease_expires_at: nullable(timestamp()),
  lease_id: nullable(
    t.String({ description: "The caller's own live lease id; null for everyone else." }),
  ),
  attempts: t.Integer({
    minimum: 0,
    description: 'Fresh claims since the item was created, reopened or revoked.',
  }),
  available_at: nullable(
    timestamp('Set by a delayed release; claim next passes the item over until then.'),
  ),
  created_at: timestamp(),
  updated_at: timestamp(),
}

export const ItemSchema = t.Object(itemFields, {
  description: 'A saved item as seen by the caller.',
})
export const ItemWithImageSchema = t.Object(
  {
    ...itemFields,
    source_image_url: nullable(
      t.String({ description: 'Signed; works without a bearer token until it expires.' }),
    ),
  },
  { description: 'A saved item with its signed image URL.' },
)

export const PageSchema = t.Object({
  items: t.Array(ItemSchema),
  next_cursor: nullable(
    t.String({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  ),
})

export const HistorySchema = t.Object({
  events: t.Array(
    t.Object({
      at: timestamp(),
      actor: ClaimantSchema,
      action: t.String({
        description: 'claim, renew, release, done, reopen, note, correction or revoke.',
      }),
      from: nullable(t.String()),
      to: nullable(t.String()),
      note: nullable(t.String()),
    }),
  ),
})

// The range is the domain's rule (GraphQL's `first` shares it); the query schema only coerces.
const limitQuery = t.Integer({
  ...range(1, LIMITS.listLimit),
  default: LIMITS.defaultListLimit,
  description: `1 to ${LIMITS.listLimit}; default ${LIMITS.defaultListLimit}.`,
})
const formatQuery = enumOf(['json', 'md'] as const, 'json (default) or md for text/markdown.')

export const ItemListQuery = t.Object({
  format: t.Optional(formatQuery),
  type: t.Optional(enumOf(ITEM_TYPES)),
  status: t.Optional(enumOf(EXTRACTION_STATUSES)),
  tag: t.Optional(t.String({ description: 'Exact tag match.' })),
  tags: t.Optional(
    t.String({ description: 'Comma-separated; every tag must be present (AND with `tag`).' }),
  ),
  cursor: t.Optional(t.String({ description: 'Opaque cursor from `next_cursor`.' })),
  limit: t.Optional(limitQuery),
})

export const InboxQuery = t.Object({
  format: t.Optional(formatQuery),
  workflow_status: t.Optional(enumOf(WORKFLOW_STATUSES)),
  requested_action: t.Optional(enumOf(REQUESTED_ACTIONS)),
  type: t.Optional(enumOf(ITEM_TYPES)),
  destination_kind: t.Optional(t.String()),
  destination_name: t.Optional(t.String()),
  tag: t.Optional(t.String()),
  tags: t.Optional(t.String({ description: 'Comma-separated; all must match.' })),
  claim_status: t.Optional(
    enumOf(
      CLAIM_STATUS_FILTERS,
      'all (default), available, claimed, mine, claimable (what claim next picks) or stuck.',
    ),
  ),
  cursor: t.Optional(t.String()),
  limit: t.Optional(limitQuery),
})

export const FormatQuery = t.Object({ format: t.Optional(formatQuery) })

const tagsInput = t.Array(t.String(), {
  description: `At most ${LIMITS.tags} tags of at most ${LIMITS.tagLength} characters.`,
})

export const CreateItemBody = t.Object(
  {
    type: enumOf(ITEM_TYPES),
    status: t.Optional(enumOf(EXTRACTION_STATUSES)),
    workflow_status: t.Optional(enumOf(WORKFLOW_STATUSES)),
    title: t.Optional(nullable(t.String())),
    summary: t.Optional(nullable(t.String())),
    action_note: t.Optional(nullable(t.String())),
    tags: t.Optional(tagsInput),
    requested_action: t.Optional(nullable(enumOf(REQUESTED_ACTIONS))),
    destination_kind: t.Optional(nullable(t.String())),
    destination_name: t.Optional(nullable(t.String())),
  },
  { additionalProperties: false },
)

export const PatchItemBody = t.Object(
  {
    workflow_status: t.Optional(enumOf(WORKFLOW_STATUSES)),
    resolution_note: t.Optional(nullable(t.String())),
    claim_action: t.Optional(
      enumOf(
        ['claim', 'release', 'revoke'] as const,
        'revoke: the signed-in owner ends any claim and resets attempts.',
      ),
    ),
    lease_seconds: t.Optional(
      t.Integer({
        ...range(1, LIMITS.leaseSeconds),
        description: `Only with claim_action "claim": 1 to ${LIMITS.leaseSeconds}; default ${LIMITS.defaultLeaseSeconds}.`,
      }),
    ),
    retry_after_seconds: t.Optional(
      t.Integer({
        ...range(1, LIMITS.retryAfterSeconds),
        description: `Only with claim_action "release": 1 to ${LIMITS.retryAfterSeconds}; claim next passes the item over until then.`,
      }),
    ),
    lease_id: t.Optional(
      t.String({
        description:
          'Fencing: apply only while the caller holds this live lease; otherwise 409 lease_lost.',
      }),
    ),
    corrections: t.Optional(
      t.Object(
        {
          title: t.Optional(nullable(t.String())),
          summary: t.Optional(nullable(t.String())),
          action_note: t.Optional(nullable(t.String())),
          tags: t.Optional(tagsInput),
        },
        { additionalProperties: false, description: 'Signed-in sessions only.' },
      ),
    ),
  },
  { additionalProperties: false },
)

const workFilterFields = {
  requested_action: t.Optional(enumOf(REQUESTED_ACTIONS)),
  type: t.Optional(enumOf(ITEM_TYPES)),
  destination_kind: t.Optional(t.String()),
  destination_name: t.Optional(t.String()),
  tag: t.Optional(t.String()),
  tags: t.Optional(t.Array(t.String(), { description: 'All must match (AND with tag).' })),
}

export const ClaimNextBody = t.Object(
  {
    ...workFilterFields,
    lease_seconds: t.Optional(
      t.Integer({
        ...range(1, LIMITS.leaseSeconds),
        description: `1 to ${LIMITS.leaseSeconds}; default ${LIMITS.defaultLeaseSeconds}.`,
      }),
    ),
    wait_seconds: t.Optional(
      t.Integer({
        ...range(0, LIMITS.waitSeconds),
        description: `Long poll: 0 to ${LIMITS.waitSeconds}; default 0.`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const LeaseSchema = t.Object({
  id: t.String({ description: 'Send as lease_id to fence later changes.' }),
  expires_at: timestamp(),
  attempt: t.Integer({ minimum: 1 }),
})

export const ClaimNextSchema = t.Object(
  { item: nullable(ItemSchema), lease: nullable(LeaseSchema) },
  {
    description:
      'The claimed item and its lease, or both null when nothing was claimable by the end of the wait.',
  },
)

const tokenFields = {
  id: t.String(),
  name: t.String(),
  scopes: t.Array(enumOf(AGENT_TOKEN_SCOPES)),
  created_at: timestamp(),
  expires_at: timestamp(),
  last_used_at: nullable(timestamp()),
  token_hint: t.String({ description: 'The last 4 characters of the token.' }),
}
export const AgentTokenSchema = t.Object(tokenFields)
export const AgentTokenListSchema = t.Object({ tokens: t.Array(AgentTokenSchema) })
export const CreatedAgentTokenSchema = t.Object({
  ...tokenFields,
  token: t.String({ description: 'The raw secret (sat_…). Shown once; store it now.' }),
})
export const CreateAgentTokenBody = t.Object(
  {
    name: t.String({ description: '1 to 100 characters.' }),
    scopes: t.Array(enumOf(AGENT_TOKEN_SCOPES), { description: 'At least one.' }),
    expires_in_days: t.Optional(
      t.String({ description: 'Whole number of days, 1 to 365; default "90".' }),
    ),
  },
  { additionalProperties: false },
)

export const IdParams = t.Object({ id: t.String({ maxLength: 100 }) })

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No content',
  400: 'Invalid request (invalid_request)',
  401: 'Authentication required (unauthorized, session_required)',
  403: 'Missing scope or not allowed (insufficient_scope, forbidden, quota_exceeded)',
  404: 'Not found (not_found)',
  409: 'Conflict (claim_conflict, invalid_transition, lease_lost, token_limit_reached, webhook_limit_reached, idempotency_key_in_flight)',
  422: 'Idempotency-Key reused with a different request (idempotency_key_reused)',
  413: 'Payload too large (payload_too_large)',
  415: 'Unsupported media type (unsupported_media_type)',
  429: 'Rate limited (rate_limited), with Retry-After',
  500: 'Internal error (internal)',
}

/**
 * The OpenAPI responses of a route, from the same schemas the tests check real answers
 * against (test/openapi.test.ts). Documented rather than declared as Elysia `response`
 * hooks: Elysia would re-validate every answer at run time, a quarter of a list's cost.
 */
export function documented(responses: Record<number, TSchema>) {
  return Object.fromEntries(
    Object.entries(responses).map(([status, schema]) => {
      const description =
        (schema as { description?: string }).description ?? STATUS_TEXT[Number(status)] ?? 'Answer'
      if (schema === ErrorSchema) {
        return [
          status,
          {
            description: STATUS_TEXT[Number(status)],
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        ]
      }
      if ((schema as { type?: string }).type === 'null' || Number(status) === 204)
        return [status, { description }]
      if ((schema as { format?: string }).format === 'binary') {
        return [
          status,
          { description, content: { 'image/*': { schema: { type: 'string', format: 'binary' } } } },
        ]
      }
      return [
        status,
        {
          description,
          content: { 'application/json': { schema: JSON.parse(JSON.stringify(schema)) } },
        },
      ]
    }),
  ) as never
}

/** The error answers a route can give, as OpenAPI response entries; any route can answer 500. */
export function errors(...statuses: number[]) {
  return Object.fromEntries([...statuses, 500].map((s) => [s, ErrorSchema])) as Record<
    number,
    typeof ErrorSchema
  >
}
