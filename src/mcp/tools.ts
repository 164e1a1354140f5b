import { t, type TSchema } from 'elysia'
import { Type, type Static } from '@sinclair/typebox'
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import { claimantOf, scopesOf, type AgentTokenScope, type Caller } from '../domain/caller'
import type { Deps } from '../domain/deps'
import { iso } from '../domain/ids'
import { claimNext, leaseOf, listInbox } from '../domain/inbox'
import type { Item } from '../domain/item'
import { getItem } from '../domain/items'
import { LIMITS } from '../domain/rules'
import { itemHistory, updateItem, type WorkflowChangeInput } from '../domain/workflow'
import {
  ClaimNextBody,
  ClaimNextSchema,
  ClaimantSchema,
  HistorySchema,
  InboxQuery,
  ItemSchema,
  ItemWithImageSchema,
  LeaseSchema,
  PageSchema,
} from '../http/schemas'
import { historyJson, itemJson, leaseJson, pageJson, type ItemJson } from '../http/serialize'

// The eight tools of CONTRACT 9. Each one translates: MCP arguments (REST's snake_case names) in,
// one domain call, REST's JSON rendering out. The schemas are REST's own TypeBox schemas, so an
// MCP answer has exactly the shape the OpenAPI document gives the same REST answer. Ranges and
// combinations are the domain's to check; the input schemas only check types and names.
// Integers are TypeBox's plain `Type.Integer`: Elysia's `t.Integer` also admits numeric strings.

export interface ToolContext {
  deps: Deps
  caller: Caller
  /** Aborted when the client cancels the call or goes away (ends a claim_next wait). */
  signal: AbortSignal
}

export interface Tool {
  name: string
  title: string
  description: string
  /** Listed only for callers holding all of these; the domain refuses the call anyway. */
  scopes: readonly AgentTokenScope[]
  annotations: ToolAnnotations
  input: TSchema
  output: TSchema
  /** The tool takes `idempotency_key`: a retry with the same key replays the first result. */
  replayable: boolean
  // Each tool's own types live in `tool()` below; the list holds them alike.
  // biome-ignore lint/suspicious/noExplicitAny: erased on purpose, checked per tool by tool()
  run(ctx: ToolContext, args: any): Promise<Record<string, unknown>>
  // biome-ignore lint/suspicious/noExplicitAny: as above
  text(result: any): string
}

/** Keeps each tool's run/text typed by its own schemas while the list holds them alike. */
function tool<I extends TSchema, O extends TSchema>(
  def: Omit<Tool, 'input' | 'output' | 'run' | 'text' | 'replayable'> & {
    input: I
    output: O
    replayable?: boolean
    run(ctx: ToolContext, args: Static<I>): Promise<Static<O>>
    text(result: Static<O>): string
  },
): Tool {
  return { replayable: false, ...def } as Tool
}

const READ: readonly AgentTokenScope[] = ['read_items']
const WORK: readonly AgentTokenScope[] = ['read_items', 'update_workflow_status']

const itemId = t.String({ description: 'The item id.' })
const leaseId = t.String({
  description:
    'The lease id from claim_next (lease.id). Fences the change: a stale lease gets lease_lost.',
})
const idempotencyKey = t.String({
  description:
    'Optional, 1 to 255 printable ASCII characters. A retry with the same key and arguments replays the first result and changes nothing (kept 24 h).',
})

/** `tag` and `tags` of REST, one list for the domain: all must match. */
const filterTags = (tag?: string, tags?: string[]) => [
  ...(tag !== undefined ? [tag] : []),
  ...(tags ?? []),
]

// The inbox filters are REST's, except `tags`, which is an array here (a query string joins it with commas).
const {
  format: _format,
  tags: _tags,
  limit: _limit,
  cursor: _cursor,
  ...inboxFilters
} = InboxQuery.properties
const { lease_seconds: _ls, wait_seconds: _ws, ...workFilters } = ClaimNextBody.properties

/** MCP's own page size: small answers keep an agent's context small (CONTRACT 9). */
const MCP_PAGE = { max: 50, default: 10 }

const ItemOnly = t.Object({ item: ItemSchema })
const ItemAndLease = t.Object({ item: ItemSchema, lease: LeaseSchema })

const WhoamiSchema = t.Object({
  caller: t.Object({ ...ClaimantSchema.properties, user_id: t.String() }),
  scopes: t.Array(t.String()),
  server_time: t.String({ format: 'date-time' }),
  token_expires_at: t.Union([t.String({ format: 'date-time' }), t.Null()], {
    description: 'Leases never outlive the agent token.',
  }),
  lease_limits: t.Object({
    default_lease_seconds: Type.Integer(),
    max_lease_seconds: Type.Integer(),
    max_wait_seconds: Type.Integer(),
    max_retry_after_seconds: Type.Integer(),
    max_claim_attempts: Type.Integer({
      description: 'After this many fresh claims an item is stuck and claim_next passes it over.',
    }),
  }),
})

// Compact text renderings: one line an item, the cursor spelled out, never prose around it.
const itemLine = (i: ItemJson) =>
  `${i.id} | ${i.title ?? '(untitled)'} | ${i.type} | ${i.requested_action ?? '-'} | ${i.workflow_status} | ${i.claim_status}` +
  (i.lease_expires_at ? ` until ${i.lease_expires_at}` : '') +
  (i.lease_id ? ` | lease ${i.lease_id}` : '')
const leaseLine = (l: Static<typeof LeaseSchema>) =>
  `lease ${l.id} expires ${l.expires_at} (attempt ${l.attempt})`

/** The lease of the caller's own live claim, as claim next reports it. */
const leaseOfItem = (item: Item) => leaseJson(leaseOf(item))

const change = (ctx: ToolContext, id: string, input: WorkflowChangeInput) =>
  updateItem(ctx.deps, ctx.caller, id, input)

export const TOOLS: readonly Tool[] = [
  tool({
    name: 'whoami',
    title: 'Who am I',
    description:
      'The caller (agent token or user), its scopes, the server time and the lease limits. Call first.',
    scopes: [],
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    input: t.Object({}, { additionalProperties: false }),
    output: WhoamiSchema,
    async run({ deps, caller }) {
      return {
        caller: { ...claimantOf(caller), user_id: caller.userId },
        scopes: [...scopesOf(caller)],
        server_time: iso(deps.clock.now()),
        token_expires_at: caller.kind === 'agent_token' ? iso(caller.expiresAt) : null,
        lease_limits: {
          default_lease_seconds: LIMITS.defaultLeaseSeconds,
          max_lease_seconds: LIMITS.leaseSeconds,
          max_wait_seconds: LIMITS.waitSeconds,
          max_retry_after_seconds: LIMITS.retryAfterSeconds,
          max_claim_attempts: deps.limits.maxClaimAttempts,
        },
      }
    },
    text: (r) =>
      `${r.caller.kind} ${r.caller.id}${r.caller.name ? ` (${r.caller.name})` : ''}; scopes: ${r.scopes.join(', ')}; time ${r.server_time}; ` +
      `leases ${r.lease_limits.default_lease_seconds}s default, ${r.lease_limits.max_lease_seconds}s max`,
  }),

  tool({
    name: 'inbox_list',
    title: 'List the inbox',
    description:
      'Items with a requested action, oldest first (the work queue). Filters narrow it; claim_status "claimable" shows what claim_next would pick. ' +
      `Pages of limit items (1 to ${MCP_PAGE.max}, default ${MCP_PAGE.default}); pass next_cursor back as cursor for the next page.`,
    scopes: READ,
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    input: t.Object(
      {
        ...inboxFilters,
        tags: t.Optional(t.Array(t.String(), { description: 'All must match (AND with tag).' })),
        limit: t.Optional(
          Type.Integer({
            minimum: 1,
            maximum: MCP_PAGE.max,
            description: `1 to ${MCP_PAGE.max}; default ${MCP_PAGE.default}.`,
          }),
        ),
        cursor: t.Optional(t.String({ description: 'next_cursor of the previous page.' })),
      },
      { additionalProperties: false },
    ),
    output: PageSchema,
    async run({ deps, caller }, a) {
      const page = await listInbox(deps, caller, {
        workflowStatus: a.workflow_status,
        requestedAction: a.requested_action,
        type: a.type,
        destinationKind: a.destination_kind,
        destinationName: a.destination_name,
        tags: filterTags(a.tag, a.tags),
        claimStatus: a.claim_status,
        cursor: a.cursor,
        limit: a.limit ?? MCP_PAGE.default,
      })
      return pageJson(page)
    },
    text: (r) =>
      [
        ...r.items.map(itemLine),
        r.items.length === 0 ? 'No items.' : '',
        r.next_cursor ? `next_cursor: ${r.next_cursor}` : 'End of inbox.',
      ]
        .filter(Boolean)
        .join('\n'),
  }),

  tool({
    name: 'item_get',
    title: 'Get an item',
    description:
      'One item with its signed image link; history: true adds every claim, release, done, note and revoke, oldest first.',
    scopes: READ,
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    input: t.Object(
      {
        id: itemId,
        history: t.Optional(
          t.Boolean({ description: 'Include the workflow history (default false).' }),
        ),
      },
      { additionalProperties: false },
    ),
    output: t.Object({
      item: ItemWithImageSchema,
      history: t.Optional(HistorySchema.properties.events),
    }),
    async run({ deps, caller }, a) {
      const found = await getItem(deps, caller, a.id)
      const item = { ...itemJson(found), source_image_url: found.sourceImageUrl }
      if (!a.history) return { item }
      return { item, history: historyJson(await itemHistory(deps, caller, a.id)).events }
    },
    text: (r) =>
      [
        itemLine(r.item),
        r.item.summary ? `summary: ${r.item.summary}` : '',
        r.item.action_note ? `action note: ${r.item.action_note}` : '',
        r.item.resolution_note ? `resolution note: ${r.item.resolution_note}` : '',
        r.item.tags.length ? `tags: ${r.item.tags.join(', ')}` : '',
        ...(r.history ?? []).map(
          (e) =>
            `${e.at} ${e.action} by ${e.actor.kind} ${e.actor.name ?? e.actor.id}${e.note ? `: ${e.note}` : ''}`,
        ),
      ]
        .filter(Boolean)
        .join('\n'),
  }),

  tool({
    name: 'claim_next',
    title: 'Claim the next item',
    description:
      'Atomically claims the oldest claimable inbox item matching the filters and returns it with a lease. No two callers ever get the same item. ' +
      `lease_seconds 1 to ${LIMITS.leaseSeconds} (default ${LIMITS.defaultLeaseSeconds}); wait_seconds 0 to ${LIMITS.waitSeconds} waits for work. ` +
      'item and lease are null when nothing is claimable. Keep lease.id: pass it as lease_id to lease_renew, lease_release and item_complete.',
    scopes: WORK,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    input: t.Object(
      {
        ...workFilters,
        lease_seconds: t.Optional(
          Type.Integer({
            description: `1 to ${LIMITS.leaseSeconds}; default ${LIMITS.defaultLeaseSeconds}.`,
          }),
        ),
        wait_seconds: t.Optional(
          Type.Integer({ description: `0 to ${LIMITS.waitSeconds}; default 0 (answer at once).` }),
        ),
        idempotency_key: t.Optional(idempotencyKey),
      },
      { additionalProperties: false },
    ),
    output: ClaimNextSchema,
    replayable: true,
    async run({ deps, caller, signal }, a) {
      const result = await claimNext(
        deps,
        caller,
        {
          requestedAction: a.requested_action,
          type: a.type,
          destinationKind: a.destination_kind,
          destinationName: a.destination_name,
          tags: filterTags(a.tag, a.tags),
          leaseSeconds: a.lease_seconds,
          waitSeconds: a.wait_seconds,
        },
        signal,
      )
      return result.item
        ? { item: itemJson(result.item), lease: leaseJson(result.lease) }
        : { item: null, lease: null }
    },
    text: (r) =>
      r.item && r.lease
        ? [
            itemLine(r.item),
            leaseLine(r.lease),
            r.item.action_note ? `action note: ${r.item.action_note}` : '',
          ]
            .filter(Boolean)
            .join('\n')
        : 'Nothing claimable right now.',
  }),

  tool({
    name: 'lease_renew',
    title: 'Renew a lease',
    description: `Extends your lease to lease_seconds from now (1 to ${LIMITS.leaseSeconds}). Fails with lease_lost when the lease expired, was revoked or re-issued: stop working on the item then.`,
    scopes: WORK,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    input: t.Object(
      {
        item_id: itemId,
        lease_id: leaseId,
        lease_seconds: Type.Integer({ description: `1 to ${LIMITS.leaseSeconds}.` }),
      },
      { additionalProperties: false },
    ),
    output: ItemAndLease,
    async run(ctx, a) {
      const item = await change(ctx, a.item_id, {
        claimAction: 'claim',
        leaseSeconds: a.lease_seconds,
        leaseId: a.lease_id,
      })
      return { item: itemJson(item), lease: leaseOfItem(item) }
    },
    text: (r) => `${itemLine(r.item)}\n${leaseLine(r.lease)}`,
  }),

  tool({
    name: 'lease_release',
    title: 'Release a lease',
    description: `Gives the item back to the queue unfinished. retry_after_seconds (1 to ${LIMITS.retryAfterSeconds}) keeps claim_next from handing it out again until then.`,
    scopes: WORK,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    input: t.Object(
      {
        item_id: itemId,
        lease_id: leaseId,
        retry_after_seconds: t.Optional(
          Type.Integer({ description: `1 to ${LIMITS.retryAfterSeconds}.` }),
        ),
      },
      { additionalProperties: false },
    ),
    output: ItemOnly,
    async run(ctx, a) {
      const item = await change(ctx, a.item_id, {
        claimAction: 'release',
        leaseId: a.lease_id,
        retryAfterSeconds: a.retry_after_seconds,
      })
      return { item: itemJson(item) }
    },
    text: (r) => itemLine(r.item),
  }),

  tool({
    name: 'item_complete',
    title: 'Complete an item',
    description:
      'Marks the item done (and releases your claim), optionally with a resolution note. Pass lease_id to apply only while your lease is live; ' +
      'pass idempotency_key to retry safely.',
    scopes: WORK,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    input: t.Object(
      {
        item_id: itemId,
        lease_id: t.Optional(leaseId),
        resolution_note: t.Optional(
          t.String({ description: `What was done; at most ${LIMITS.note} characters.` }),
        ),
        idempotency_key: t.Optional(idempotencyKey),
      },
      { additionalProperties: false },
    ),
    output: ItemOnly,
    replayable: true,
    async run(ctx, a) {
      const item = await change(ctx, a.item_id, {
        workflowStatus: 'done',
        leaseId: a.lease_id,
        resolutionNote: a.resolution_note,
      })
      return { item: itemJson(item) }
    },
    text: (r) => itemLine(r.item),
  }),

  tool({
    name: 'item_add_note',
    title: 'Note progress on an item',
    description:
      "Sets the item's resolution note (the latest note wins; every note stays in the history). Pass lease_id to apply only while your lease is live.",
    scopes: WORK,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    input: t.Object(
      {
        item_id: itemId,
        note: t.String({ description: `At most ${LIMITS.note} characters.` }),
        lease_id: t.Optional(leaseId),
      },
      { additionalProperties: false },
    ),
    output: ItemOnly,
    async run(ctx, a) {
      const item = await change(ctx, a.item_id, { resolutionNote: a.note, leaseId: a.lease_id })
      return { item: itemJson(item) }
    },
    text: (r) => `${itemLine(r.item)}\nnote: ${r.item.resolution_note ?? ''}`,
  }),
]
