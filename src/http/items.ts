import { Elysia, t } from 'elysia'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import { invalid } from '../errors'
import type { Deps } from '../domain/deps'
import { AS_JSON } from '../domain/item-pages'
import { claimNext, listInbox } from '../domain/inbox'
import { createItem, deleteItem, getItem, listItems, type NewItem } from '../domain/items'
import { itemHistory, updateItem } from '../domain/workflow'
import { authentication, secured } from './auth'
import { checkBody } from './body'
import { MARKDOWN, renderItem, renderPage } from './markdown'
import {
  ClaimNextBody,
  ClaimNextSchema,
  CreateItemBody,
  FormatQuery,
  HistorySchema,
  IdParams,
  InboxQuery,
  ItemListQuery,
  ItemSchema,
  ItemWithImageSchema,
  PageSchema,
  PatchItemBody,
  documented,
  errors,
} from './schemas'
import {
  historyJson,
  itemJson,
  itemWithImageJson,
  jsonPageText,
  leaseJson,
  type PageJson,
  pageJson,
} from './serialize'

export interface ItemRouteDeps {
  deps: Deps
  resolveCaller: CallerResolver
  rateLimit: CallerRateLimiter
}

/**
 * A text/markdown answer. Typed as the JSON answer it replaces so the route keeps its schema;
 * Elysia sends a Response as it is.
 */
const markdown = <T>(body: string) =>
  new Response(body, { headers: { 'content-type': MARKDOWN } }) as unknown as T

/** JSON already rendered as text (the lists' stored documents), typed as the answer it is. */
const jsonText = <T>(body: string) =>
  new Response(body, {
    headers: { 'content-type': 'application/json;charset=utf-8' },
  }) as unknown as T

/** `tag` and the comma-separated `tags` of a query string: one list, all must match. */
const queryTags = (tag?: string, tags?: string) => [
  ...(tag !== undefined ? [tag] : []),
  ...(tags?.split(',') ?? []),
]

/** multipart/form-data → the same object as the JSON body, plus the `image` bytes. */
async function fromForm(
  form: FormData,
): Promise<{ body: Record<string, unknown>; image?: Uint8Array }> {
  const body: Record<string, unknown> = {}
  let image: Uint8Array | undefined
  for (const [key, value] of form.entries() as IterableIterator<[string, File | string]>) {
    if (key === 'image') {
      if (typeof value === 'string') throw invalid('image must be a file.', { field: 'image' })
      if (image) throw invalid('Send one image.', { field: 'image' })
      image = new Uint8Array(await value.arrayBuffer())
    } else if (typeof value !== 'string') {
      throw invalid(`${key} must be a text field.`, { field: key })
    } else if (key === 'tags') {
      // Repeated `tags` fields, or one field holding a JSON array.
      const tags = (body.tags as unknown[] | undefined) ?? []
      if (value.trim().startsWith('[')) {
        let parsed: unknown
        try {
          parsed = JSON.parse(value)
        } catch {
          throw invalid('tags must be repeated fields or a JSON array.', { field: 'tags' })
        }
        if (!Array.isArray(parsed))
          throw invalid('tags must be repeated fields or a JSON array.', { field: 'tags' })
        body.tags = [...tags, ...parsed]
      } else body.tags = [...tags, value]
    } else {
      if (key in body) throw invalid(`${key} was sent twice.`, { field: key })
      body[key] = value
    }
  }
  return { body, image }
}

/** Documents a JSON body that the route, not Elysia, checks (strictly, without coercion). */
export const jsonBody = (schema: unknown, required = true) =>
  ({ required, content: { 'application/json': { schema } } }) as never

const createItemRequestBody = {
  required: true,
  content: {
    'application/json': { schema: { $ref: '#/components/schemas/CreateItem' } },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['type'],
        properties: {
          ...JSON.parse(JSON.stringify(CreateItemBody.properties)),
          tags: {
            type: 'array',
            items: { type: 'string' },
            description: 'Repeated fields, or one JSON array.',
          },
          image: {
            type: 'string',
            format: 'binary',
            description: 'PNG, JPEG, WebP or GIF; at most 10 MiB.',
          },
        },
      },
    },
  },
}

/**
 * `/api/saved/items` and `/api/saved/inbox`: check the request's shape, rename snake_case to the
 * domain's camelCase (the one rename), call the domain, render the answer.
 */
export function itemRoutes({ deps, resolveCaller, rateLimit }: ItemRouteDeps) {
  return new Elysia({ prefix: '/api/saved' })
    .use(authentication(resolveCaller, rateLimit))
    .get(
      '/items',
      async ({ caller, query: q }) => {
        const filter = {
          type: q.type,
          status: q.status,
          tags: queryTags(q.tag, q.tags),
          cursor: q.cursor,
          limit: q.limit,
        }
        if (q.format === 'md') {
          return markdown<PageJson>(
            renderPage('Saved items', pageJson(await listItems(deps, caller, filter))),
          )
        }
        return jsonText<PageJson>(jsonPageText(await listItems(deps, caller, filter, AS_JSON)))
      },
      {
        query: ItemListQuery,
        detail: {
          responses: documented({ 200: PageSchema, ...errors(400, 401, 403, 429) }),
          summary: 'List saved items, newest first',
          tags: ['items'],
          ...secured,
          description: 'format=md answers text/markdown instead of JSON.',
        },
      },
    )
    .post(
      '/items',
      async ({ caller, body: raw, set }) => {
        const { body, image } =
          raw instanceof FormData ? await fromForm(raw) : { body: raw, image: undefined }
        const b = checkBody(CreateItemBody, body)
        const input: NewItem = {
          type: b.type,
          status: b.status,
          workflowStatus: b.workflow_status,
          title: b.title,
          summary: b.summary,
          actionNote: b.action_note,
          tags: b.tags,
          requestedAction: b.requested_action,
          destinationKind: b.destination_kind,
          destinationName: b.destination_name,
          image,
        }
        set.status = 201
        return itemWithImageJson(await createItem(deps, caller, input))
      },
      {
        detail: {
          responses: documented({
            201: ItemWithImageSchema,
            ...errors(400, 401, 403, 409, 413, 415, 422, 429),
          }),
          summary: 'Save a new item (signed-in session only)',
          tags: ['items'],
          ...secured,
          requestBody: createItemRequestBody as never,
        },
      },
    )
    .get(
      '/items/:id',
      async ({ caller, params, query }) => {
        const item = itemWithImageJson(await getItem(deps, caller, params.id))
        return query.format === 'md' ? markdown<typeof item>(renderItem(item)) : item
      },
      {
        params: IdParams,
        query: FormatQuery,
        detail: {
          responses: documented({ 200: ItemWithImageSchema, ...errors(400, 401, 403, 404, 429) }),
          summary: 'Fetch one item with a signed image URL',
          tags: ['items'],
          ...secured,
          description: 'format=md answers text/markdown instead of JSON.',
        },
      },
    )
    .patch(
      '/items/:id',
      async ({ caller, params, body }) => {
        const b = checkBody(PatchItemBody, body)
        const c = b.corrections
        const item = await updateItem(deps, caller, params.id, {
          claimAction: b.claim_action,
          leaseSeconds: b.lease_seconds,
          retryAfterSeconds: b.retry_after_seconds,
          leaseId: b.lease_id,
          workflowStatus: b.workflow_status,
          resolutionNote: b.resolution_note,
          corrections: c && {
            title: c.title,
            summary: c.summary,
            actionNote: c.action_note,
            tags: c.tags,
          },
        })
        return itemJson(item)
      },
      {
        params: IdParams,
        detail: {
          responses: documented({
            200: ItemSchema,
            ...errors(400, 401, 403, 404, 409, 413, 415, 422, 429),
          }),
          summary:
            'Claim, renew, release, revoke, mark done, reopen, attach a resolution note, or correct an item',
          description:
            'Claim action first, then workflow status, then notes and corrections; all of it applies or none. With lease_id, only while that lease is yours (else 409 lease_lost).',
          tags: ['workflow'],
          ...secured,
          requestBody: jsonBody(PatchItemBody),
        },
      },
    )
    .delete(
      '/items/:id',
      async ({ caller, params, set }) => {
        await deleteItem(deps, caller, params.id)
        set.status = 204
      },
      {
        params: IdParams,
        detail: {
          responses: documented({
            204: t.Void({ description: 'Deleted, with its tags, history and image.' }),
            ...errors(400, 401, 404, 409, 422, 429),
          }),
          summary: 'Delete an item (signed-in session only)',
          tags: ['items'],
          ...secured,
        },
      },
    )
    .get(
      '/items/:id/history',
      async ({ caller, params }) => historyJson(await itemHistory(deps, caller, params.id)),
      {
        params: IdParams,
        detail: {
          responses: documented({ 200: HistorySchema, ...errors(400, 401, 403, 404, 429) }),
          summary: 'Workflow history of an item, oldest first',
          tags: ['workflow'],
          ...secured,
        },
      },
    )
    .get(
      '/inbox',
      async ({ caller, query: q }) => {
        const filter = {
          workflowStatus: q.workflow_status,
          requestedAction: q.requested_action,
          type: q.type,
          destinationKind: q.destination_kind,
          destinationName: q.destination_name,
          tags: queryTags(q.tag, q.tags),
          claimStatus: q.claim_status,
          cursor: q.cursor,
          limit: q.limit,
        }
        if (q.format === 'md') {
          return markdown<PageJson>(
            renderPage('Inbox', pageJson(await listInbox(deps, caller, filter))),
          )
        }
        return jsonText<PageJson>(jsonPageText(await listInbox(deps, caller, filter, AS_JSON)))
      },
      {
        query: InboxQuery,
        detail: {
          responses: documented({ 200: PageSchema, ...errors(400, 401, 403, 429) }),
          summary: 'The workflow inbox, oldest first',
          tags: ['workflow'],
          ...secured,
          description: 'format=md answers text/markdown instead of JSON.',
        },
      },
    )
    .post(
      '/inbox/claim',
      async ({ caller, body, request }) => {
        const b = checkBody(ClaimNextBody, body)
        const result = await claimNext(
          deps,
          caller,
          {
            requestedAction: b.requested_action,
            type: b.type,
            destinationKind: b.destination_kind,
            destinationName: b.destination_name,
            tags: [...(b.tag !== undefined ? [b.tag] : []), ...(b.tags ?? [])],
            leaseSeconds: b.lease_seconds,
            waitSeconds: b.wait_seconds,
          },
          request.signal,
        )
        return result.item
          ? { item: itemJson(result.item), lease: leaseJson(result.lease) }
          : { item: null, lease: null }
      },
      {
        detail: {
          responses: documented({
            200: ClaimNextSchema,
            ...errors(400, 401, 403, 409, 413, 415, 422, 429),
          }),
          summary:
            'Claim next: atomically claim the oldest claimable inbox item, optionally waiting for one',
          description:
            'Needs read_items and update_workflow_status. Never answers 409 for contention; two callers never get the same item.',
          tags: ['workflow'],
          ...secured,
          // Every property is optional, the body too: no body claims the oldest claimable item.
          requestBody: jsonBody(ClaimNextBody, false),
        },
      },
    )
}
