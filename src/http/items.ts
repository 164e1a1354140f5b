import { Elysia } from 'elysia'
import type { CallerResolver } from '../auth/caller'
import type { CallerRateLimiter } from '../auth/rate-limit'
import { invalid } from '../errors'
import { createItem, getItem, listItems, type ItemDeps, type NewImage, type CreateItemInput } from '../domain/items'
import { updateItem, itemHistory } from '../domain/workflow'
import { listInbox } from '../domain/inbox'
import { authentication, secured } from './auth'
import { MARKDOWN, renderItem, renderPage } from './markdown'
import {
  FormatQuery, HistorySchema, IdParams, InboxQuery, ItemListQuery, ItemSchema, ItemWithImageSchema, PageSchema,
  PatchItemBody, documented, errors,
} from './schemas'

export interface ItemRouteDeps extends ItemDeps {
  resolveCaller: CallerResolver
  rateLimit: CallerRateLimiter
  maxUploadBytes: number
  /** The public origin for signed image links; defaults to the request's own origin. */
  publicUrl?: string
}

/**
 * A text/markdown answer. Typed as the JSON answer it replaces so the route keeps its schema;
 * Elysia sends a Response as it is.
 */
const markdown = <T>(body: string) => new Response(body, { headers: { 'content-type': MARKDOWN } }) as unknown as T

/** multipart/form-data → the same fields as the JSON body, plus the `image` file. */
async function fromForm(form: FormData): Promise<{ input: CreateItemInput; image?: NewImage }> {
  const input: Record<string, unknown> = {}
  let image: NewImage | undefined
  for (const [key, value] of form.entries() as IterableIterator<[string, File | string]>) {
    if (key === 'image') {
      if (typeof value === 'string') throw invalid('image must be a file.', { field: 'image' })
      if (image) throw invalid('Send one image.', { field: 'image' })
      image = { bytes: new Uint8Array(await value.arrayBuffer()) }
    } else if (typeof value !== 'string') {
      throw invalid(`${key} must be a text field.`, { field: key })
    } else if (key === 'tags') {
      // Repeated `tags` fields, or one field holding a JSON array.
      const tags = (input.tags as string[] | undefined) ?? []
      if (value.trim().startsWith('[')) {
        try {
          input.tags = [...tags, ...JSON.parse(value)]
        } catch {
          throw invalid('tags must be repeated fields or a JSON array.', { field: 'tags' })
        }
      } else input.tags = [...tags, value]
    } else {
      if (key in input) throw invalid(`${key} was sent twice.`, { field: key })
      input[key] = value
    }
  }
  return { input: input as CreateItemInput, image }
}

/** Documents a JSON body that the domain, not Elysia, validates. */
export const jsonBody = (schema: unknown) => ({ required: true, content: { 'application/json': { schema } } }) as never

const createItemRequestBody = {
  required: true,
  content: {
    'application/json': { schema: { $ref: '#/components/schemas/CreateItem' } },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', enum: ['event', 'media', 'reference'] },
          title: { type: 'string' }, summary: { type: 'string' }, action_note: { type: 'string' },
          status: { type: 'string' }, workflow_status: { type: 'string' }, requested_action: { type: 'string' },
          destination_kind: { type: 'string' }, destination_name: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' }, description: 'Repeated fields, or one JSON array.' },
          image: { type: 'string', format: 'binary', description: 'PNG, JPEG, WebP or GIF; at most 10 MiB.' },
        },
      },
    },
  },
}

/** `/api/saved/items` and `/api/saved/inbox`: translate HTTP to the domain and back, nothing more. */
export function itemRoutes(deps: ItemRouteDeps) {
  const baseUrl = (request: Request) => deps.publicUrl ?? new URL(request.url).origin

  return new Elysia({ prefix: '/api/saved' })
    .use(authentication(deps.resolveCaller, deps.rateLimit))
    .get(
      '/items',
      async ({ caller, query }) => {
        const page = await listItems(deps, caller, query)
        return query.format === 'md' ? markdown<typeof page>(renderPage('Saved items', page)) : page
      },
      {
        query: ItemListQuery,
        detail: { responses: documented({ 200: PageSchema, ...errors(400, 401, 403, 429) }), summary: 'List saved items, newest first', tags: ['items'], ...secured, description: 'format=md answers text/markdown instead of JSON.' },
      },
    )
    .post(
      '/items',
      async ({ caller, body, request, set }) => {
        const { input, image } = body instanceof FormData ? await fromForm(body) : { input: body as CreateItemInput, image: undefined }
        const item = await createItem(deps, caller, input, image, baseUrl(request), deps.maxUploadBytes)
        set.status = 201
        return item
      },
      {
        detail: { responses: documented({ 201: ItemWithImageSchema, ...errors(400, 401, 403, 413, 415, 429) }), summary: 'Save a new item (signed-in session only)', tags: ['items'], ...secured, requestBody: createItemRequestBody as never },
      },
    )
    .get(
      '/items/:id',
      async ({ caller, params, query, request }) => {
        const item = await getItem(deps, caller, params.id, baseUrl(request))
        return query.format === 'md' ? markdown<typeof item>(renderItem(item)) : item
      },
      {
        params: IdParams,
        query: FormatQuery,
        detail: { responses: documented({ 200: ItemWithImageSchema, ...errors(400, 401, 403, 404, 429) }), summary: 'Fetch one item with a signed image URL', tags: ['items'], ...secured, description: 'format=md answers text/markdown instead of JSON.' },
      },
    )
    .patch('/items/:id', ({ caller, params, body }) => updateItem(deps.db, caller, params.id, body), {
      params: IdParams,
      // The domain validates the body (one rule, one place; GraphQL shares it), so Elysia must
      // not coerce it first: "60" is not a lease. The schema documents it.
      detail: {
        responses: documented({ 200: ItemSchema, ...errors(400, 401, 403, 404, 409, 413, 415, 429) }),
        summary: 'Claim, release, mark done, reopen, attach a resolution note, or correct an item',
        description: 'Claim action first, then workflow status, then notes and corrections; all of it applies or none.',
        tags: ['workflow'],
        ...secured,
        requestBody: jsonBody(PatchItemBody),
      },
    })
    .get('/items/:id/history', async ({ caller, params }) => ({ events: await itemHistory(deps.db, caller, params.id) }), {
      params: IdParams,
      detail: { responses: documented({ 200: HistorySchema, ...errors(400, 401, 403, 404, 429) }), summary: 'Workflow history of an item, oldest first', tags: ['workflow'], ...secured },
    })
    .get(
      '/inbox',
      async ({ caller, query }) => {
        const page = await listInbox(deps, caller, query)
        return query.format === 'md' ? markdown<typeof page>(renderPage('Inbox', page)) : page
      },
      {
        query: InboxQuery,
        detail: { responses: documented({ 200: PageSchema, ...errors(400, 401, 403, 429) }), summary: 'The workflow inbox, oldest first', tags: ['workflow'], ...secured, description: 'format=md answers text/markdown instead of JSON.' },
      },
    )
}
