import type { InValue } from '@libsql/client'
import { claimantOf, type Caller } from './caller'
import { claimSql } from './claims'
import type { Deps } from './deps'
import { ITEM_COLUMNS_AS, toItemRecord, type Item } from './item'
import { cursorOfKey, toPage, type Page } from './page'

/**
 * One page of a list, as its domain function built it: rows `FROM` … `WHERE` … in `order`, read
 * with named parameters. `alias` qualifies the item columns when `from` joins (`i` in
 * `item_tags t JOIN items i`). The reader adds the LIMIT (one row more than the page, to know
 * whether another follows) and the claim-view parameters `:now`, `:ck`, `:cid`.
 */
export interface ListQuery {
  from: string
  alias?: string
  where: string[]
  /** Absent when `from` already yields the rows in page order. */
  order?: string
  params: Record<string, InValue>
  limit: number
}

/**
 * How a list is read: as domain Items (MCP, Markdown, GraphQL's executor), as REST's JSON text,
 * or as GraphQL's values.
 */
export interface ItemReader<P> {
  read(deps: Deps, caller: Caller, now: number, q: ListQuery): Promise<P>
}

const selectSql = (q: ListQuery, columns: string) =>
  `SELECT ${columns} FROM ${q.from} WHERE ${q.where.join(' AND ')}${q.order ? ` ORDER BY ${q.order}` : ''} LIMIT :limit`

const bind = (q: ListQuery, caller: Caller, now: number) => {
  const me = claimantOf(caller)
  return { ...q.params, now, ck: me.kind, cid: me.id, limit: q.limit + 1 }
}

/** Rows → Items, each with the caller's claim view. */
export const AS_ITEMS: ItemReader<Page<Item>> = {
  async read(deps, caller, now, q) {
    const rows = await deps.db.$rows(
      selectSql(q, ITEM_COLUMNS_AS(q.alias ?? 'items')),
      bind(q, caller, now),
    )
    return toPage(
      rows.map((row) => toItemRecord(row, caller, now).item),
      q.limit,
    )
  },
}

/** A page already rendered as the JSON text of REST's `items` array. */
export interface JsonPage {
  /** `[{…},{…}]`: REST items, each with the caller's claim view. */
  items: string
  nextCursor: string | null
}

/**
 * What every stored document (`items.doc`, written by the triggers of migration 0009) ends
 * with: the claim fields of an item no lease holds.
 */
export const AVAILABLE_TAIL =
  ',"claim_status":"available","claimed_by":null,"lease_expires_at":null,"lease_id":null}'

/** Epoch milliseconds → the text of JavaScript's toISOString, in SQL (the triggers' rendering). */
const isoSql = (ms: string) =>
  `strftime('%Y-%m-%dT%H:%M:%S', ${ms} / 1000, 'unixepoch') || '.' || printf('%03d', ${ms} % 1000) || 'Z'`

/** Inside a live claim's branch: the caller holds it. */
const mineSql = claimSql.holder(':ck', ':cid')

/**
 * An item's REST JSON as the caller sees it at :now — the rule of `claimView` (item.ts) over the
 * stored document: without a live lease the document is the answer as it is; with one, its
 * available tail is replaced by who holds the lease, until when, and (for the holder only) the
 * lease id.
 */
const DOC_AS_CALLER_SEES_IT = `CASE WHEN ${claimSql.live(':now')}
  THEN substr(doc, 1, length(doc) - ${AVAILABLE_TAIL.length})
    || ',"claim_status":"' || CASE WHEN ${mineSql} THEN 'mine' ELSE 'claimed' END
    || '","claimed_by":' || json_object('kind', claim_kind, 'id', claim_id, 'name', claim_name)
    || ',"lease_expires_at":"' || ${isoSql('lease_expires_at')}
    || '","lease_id":' || CASE WHEN ${mineSql} THEN json_quote(lease_id) ELSE 'null' END || '}'
  ELSE doc END`

const DOC_COLUMNS = [
  'doc',
  'claim_kind',
  'claim_id',
  'claim_name',
  'lease_expires_at',
  'lease_id',
  'created_at',
  'id',
]

/** Where the last document of a rendered array starts: every document opens with its id. */
const DOCUMENT_START = ',{"id":"'

/**
 * The page rendered inside the database, returned as one row: the documents joined in page order
 * and the page's keys (`<created_at>:<id>`) for the cursor. A 50-item page costs the driver four
 * values instead of four hundred. `group_concat` takes rows in the order the LIMITed subquery
 * yields them (SQLite runs it as a co-routine and cannot flatten it into an aggregate); the
 * list tests walk every order this reads.
 */
export const AS_JSON: ItemReader<JsonPage> = {
  async read(deps, caller, now, q) {
    const columns = DOC_COLUMNS.map((c) => (q.alias ? `${q.alias}.${c}` : c)).join(', ')
    const [row] = await deps.db.$rows(
      `SELECT group_concat(${DOC_AS_CALLER_SEES_IT}, ','), group_concat(created_at || ':' || id, ','),
              count(*) - count(doc)
       FROM (${selectSql(q, columns)})`,
      bind(q, caller, now),
    )
    // group_concat skips NULLs: an item without its document would vanish from the page.
    if (Number(row?.[2] ?? 0) > 0) throw new Error('an item has no stored document')
    const docs = row?.[0]
    if (typeof docs !== 'string') return { items: '[]', nextCursor: null }
    const keys = String(row?.[1]).split(',')
    if (keys.length <= q.limit) return { items: `[${docs}]`, nextCursor: null }
    // One row more than the page was read: drop its document, resume after the page's last.
    const cut = docs.lastIndexOf(DOCUMENT_START)
    if (cut === -1) throw new Error('a rendered page does not separate its documents')
    return { items: `[${docs.slice(0, cut)}]`, nextCursor: cursorOfKey(keys[q.limit - 1] ?? '') }
  },
}

/**
 * GraphQL's stored rendering (`items.gql`, kept by the triggers of migration 0009): each
 * caller-independent field's JSON value in GraphQL's spelling (enums in capitals, timestamps as
 * ISO 8601), in this order, separated by U+001F.
 */
export const GRAPHQL_VALUES = [
  'id',
  'type',
  'status',
  'workflowStatus',
  'title',
  'summary',
  'actionNote',
  'resolutionNote',
  'tags',
  'requestedAction',
  'destinationKind',
  'destinationName',
  'attempts',
  'availableAt',
  'createdAt',
  'updatedAt',
] as const

/** What a read appends to the stored values: the caller's claim view, then the holder's fields. */
export const GRAPHQL_CLAIM_VALUES = [
  'claimStatus',
  'leaseExpiresAt',
  'leaseId',
  'claimant.kind',
  'claimant.id',
  'claimant.name',
] as const

const US = 'char(31)'

/** How every stored GraphQL rendering ends: the claim values of an item no lease holds. */
export const GRAPHQL_AVAILABLE_TAIL = '\x1f"AVAILABLE"\x1fnull\x1fnull\x1fnull\x1fnull\x1fnull'

/**
 * An item's GraphQL values as the caller sees it at :now — the rule of `claimView` (item.ts):
 * without a live lease the stored values are the answer as they are; with one, the available
 * tail is replaced by the caller's view of the lease and its holder.
 */
const GRAPHQL_VALUES_AS_CALLER_SEES_THEM = `CASE WHEN ${claimSql.live(':now')}
  THEN substr(gql, 1, length(gql) - ${GRAPHQL_AVAILABLE_TAIL.length})
    || ${US} || CASE WHEN ${mineSql} THEN '"MINE"' ELSE '"CLAIMED"' END
    || ${US} || '"' || ${isoSql('lease_expires_at')} || '"'
    || ${US} || CASE WHEN ${mineSql} THEN json_quote(lease_id) ELSE 'null' END
    || ${US} || json_quote(upper(claim_kind)) || ${US} || json_quote(claim_id)
    || ${US} || json_quote(claim_name)
  ELSE gql END`

/** One item of a GraphQL values page: its values start at `at` in the page's `values`. */
export interface GraphQLValues {
  values: string[]
  at: number
}

/** Values per item: the stored ones, then the claim view's. */
const VALUES_PER_ITEM = GRAPHQL_VALUES.length + GRAPHQL_CLAIM_VALUES.length

/**
 * A page of items as GraphQL's JSON values — `GRAPHQL_VALUES` then `GRAPHQL_CLAIM_VALUES` per
 * item — read as one row like `AS_JSON` and split once: the GraphQL layer writes the requested
 * keys around them (src/graphql/list-fast-path.ts) instead of building and serialising an Item
 * per row.
 */
export const AS_GRAPHQL_VALUES: ItemReader<Page<GraphQLValues>> = {
  async read(deps, caller, now, q) {
    const columns = ['gql', ...DOC_COLUMNS.slice(1)]
      .map((c) => (q.alias ? `${q.alias}.${c}` : c))
      .join(', ')
    const [row] = await deps.db.$rows(
      `SELECT group_concat(${GRAPHQL_VALUES_AS_CALLER_SEES_THEM}, ${US}), group_concat(created_at || ':' || id, ',')
       FROM (${selectSql(q, columns)})`,
      bind(q, caller, now),
    )
    const rendered = row?.[0]
    if (typeof rendered !== 'string') return toPage([], q.limit)
    // Items and their values are all separated by U+001F, which JSON text never holds raw;
    // every item has the same number of values.
    const values = rendered.split('\x1f')
    const keys = String(row?.[1]).split(',')
    if (values.length !== keys.length * VALUES_PER_ITEM)
      throw new Error('an item has no stored GraphQL rendering')
    const count = Math.min(keys.length, q.limit)
    const items = Array.from({ length: count }, (_, i) => ({ values, at: i * VALUES_PER_ITEM }))
    const cursorAt = (i: number) => {
      if (i >= count) throw new RangeError(`no item ${i} on this page`)
      return cursorOfKey(keys[i] ?? '')
    }
    return { items, nextCursor: keys.length > q.limit ? cursorAt(count - 1) : null, cursorAt }
  },
}
