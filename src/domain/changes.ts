import type { RawRow } from '../db/client'
import { invalidField } from '../errors'
import { claimantOf, requireScope, type Caller } from './caller'
import { CHANGE_SELECT, changeSeq, toChangeRecord, type ChangeRecord } from './change-record'
import type { Deps } from './deps'
import { pageLimit } from './rules'
import { tokenStillActive } from './workflow'

export type { ChangeRecord, ChangeAction } from './change-record'
export { CHANGE_ACTIONS } from './change-record'

export const CHANGE_LIMITS = { listLimit: 200, defaultListLimit: 100 } as const

/** The feed's position: the seq of the last record read, as a decimal string ("0" = the start). */
function parseAfter(field: string, raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0
  if (!/^\d{1,15}$/.test(raw)) throw invalidField(field, 'is not a cursor this service handed out')
  return Number(raw)
}

export interface ChangeQuery {
  /** A `nextCursor` (or any record's `seq`): the page starts right after it. Absent: the log's start. */
  after?: string
  limit?: number
  /** Only records of items with a requested action. */
  inbox?: boolean
}

export interface ChangePage {
  changes: ChangeRecord[]
  /** Always present: resumes exactly after the last record read (or where this page started). */
  nextCursor: string
  /** More records were already there when this page was read. */
  hasMore: boolean
}

/**
 * The caller's change feed, oldest first (CONTRACT 8). The sequence only grows in the order the
 * database applied the writes, so resuming from `nextCursor` skips nothing and repeats
 * nothing, also while changes arrive. Each record's item is read as it is now, in the same query.
 */
export async function listChanges(
  deps: Deps,
  caller: Caller,
  query: ChangeQuery = {},
): Promise<ChangePage> {
  requireScope(caller, 'read_items')
  const limit = pageLimit(query.limit, CHANGE_LIMITS.listLimit, CHANGE_LIMITS.defaultListLimit)
  const after = parseAfter('after', query.after)
  const rows = await readChanges(deps, caller.userId, after, limit + 1)
  if (rows.length === 0) await refuseFuture(deps, after)
  const hasMore = rows.length > limit
  const page = hasMore ? rows.slice(0, limit) : rows
  const now = deps.clock.now()
  const changes: ChangeRecord[] = []
  for (const row of page) {
    const { record, inbox } = toChangeRecord(row, caller, now)
    if (!query.inbox || inbox) changes.push(record)
  }
  const last = page[page.length - 1]
  return { changes, nextCursor: String(last ? changeSeq(last) : after), hasMore }
}

/**
 * A position past the log's end was never handed out: resuming there would silently skip
 * every record up to it, so it is refused like any other bad cursor.
 */
async function refuseFuture(deps: Deps, after: number) {
  if (after === 0) return
  const [row] = await deps.db.$query('SELECT coalesce(max(id), 0) AS seq FROM item_events')
  if (after > Number(row?.seq ?? 0))
    throw invalidField('after', 'is not a cursor this service handed out')
}

const readChanges = (deps: Deps, userId: string, after: number, limit: number): Promise<RawRow[]> =>
  deps.db.$rows(`${CHANGE_SELECT} WHERE e.user_id = ? AND e.id > ? ORDER BY e.id LIMIT ?`, [
    userId,
    after,
    limit,
  ])

export interface FollowInput {
  /** Resume right after this seq (SSE `Last-Event-ID`, `?after=`). Absent: start with the next change. */
  after?: string
  inbox?: boolean
}

/**
 * A live stream of the caller's changes (SSE, GraphQL subscriptions): first everything after
 * `after` read from the log, then each new change as this process's ChangeFollower sees it —
 * one query per interval for every stream of the process, whichever process made the change.
 * End it with `return()` or `signal`; either removes its listener at once.
 */
export async function followChanges(
  deps: Deps,
  caller: Caller,
  input: FollowInput,
  signal?: AbortSignal,
): Promise<ChangeStream> {
  requireScope(caller, 'read_items')
  let start: number
  if (input.after !== undefined && input.after !== '') {
    start = parseAfter('after', input.after)
    await refuseFuture(deps, start)
  } else {
    const [row] = await deps.db.$query(
      'SELECT coalesce(max(id), 0) AS seq FROM item_events WHERE user_id = ?',
      [caller.userId],
    )
    start = Number(row?.seq ?? 0)
  }
  const stream = new ChangeStream(deps, caller, start, input.inbox ?? false, signal)
  // From the follower's position on, every change reaches the stream; the catch-up reads up to it.
  try {
    await deps.changes.ready()
  } catch (error) {
    await stream.return()
    throw error
  }
  return stream
}

const CATCH_UP_PAGE = 200
/**
 * Live rows a stream may hold unread. A client that falls this far behind is closed: it
 * reconnects with Last-Event-ID and catches up from the log, instead of the process buffering
 * for it without bound.
 */
const MAX_BACKLOG = 5000

export class ChangeStream implements AsyncIterableIterator<ChangeRecord> {
  private readonly queue: ChangeRecord[] = []
  private live: RawRow[] = []
  private caughtUp = false
  private closed = false
  private wake: (() => void) | undefined
  private readonly unsubscribe: () => void
  private readonly onAbort = () => void this.return()
  private readonly readerKey: string

  constructor(
    private readonly deps: Deps,
    private readonly caller: Caller,
    /** The seq of the last record handed out (or skipped by the inbox filter). */
    private cursor: number,
    private readonly inboxOnly: boolean,
    private readonly signal?: AbortSignal,
  ) {
    const me = claimantOf(caller)
    this.readerKey = `${me.kind}:${me.id}`
    const take = (rows: RawRow[]) => {
      if (this.closed) return
      for (const row of rows) this.live.push(row)
      if (this.live.length + this.queue.length > MAX_BACKLOG) this.close()
      else this.wake?.()
    }
    this.unsubscribe = deps.changes.follow(caller.userId, (rows) => {
      if (caller.kind !== 'agent_token') return take(rows)
      // A revoked or expired token's streams end with the next change, before it is sent. One
      // check per token per poll, shared by all of that token's streams.
      const newest = rows.at(-1)
      if (!newest) return
      const active = deps.changes.memo(newest, `active:${caller.tokenId}`, () =>
        tokenStillActive(deps, caller.tokenId, deps.clock.now()),
      )
      void active.then((ok) => (ok ? take(rows) : this.close()))
    })
    if (signal?.aborted) this.close()
    else signal?.addEventListener('abort', this.onAbort)
  }

  /** Where the stream stands: the seq after which it resumes. */
  get position(): string {
    return String(this.cursor)
  }

  [Symbol.asyncIterator]() {
    return this
  }

  async next(): Promise<IteratorResult<ChangeRecord>> {
    for (;;) {
      if (this.closed) return { done: true, value: undefined }
      const record = this.queue.shift()
      if (record) return { done: false, value: record }
      if (!this.caughtUp) {
        const rows = await readChanges(this.deps, this.caller.userId, this.cursor, CATCH_UP_PAGE)
        this.accept(rows, false)
        if (rows.length < CATCH_UP_PAGE) this.caughtUp = true
        continue
      }
      if (this.live.length > 0) {
        const rows = this.live
        this.live = []
        this.accept(rows, true)
        continue
      }
      await new Promise<void>((resolve) => (this.wake = resolve))
      this.wake = undefined
    }
  }

  /**
   * Every record that is ready now, without waiting or reading the database: a writer sends
   * them in one write rather than one write per record.
   */
  takeReady(): ChangeRecord[] {
    if (this.closed) return []
    if (this.caughtUp && this.live.length > 0) {
      const rows = this.live
      this.live = []
      this.accept(rows, true)
    }
    return this.queue.splice(0)
  }

  private accept(rows: RawRow[], live: boolean) {
    const now = this.deps.clock.now()
    for (const row of rows) {
      const seq = changeSeq(row)
      if (seq <= this.cursor) continue
      this.cursor = seq
      // Live rows are shared by the process's streams: render once per reader identity.
      const { record, inbox } = live
        ? this.deps.changes.memo(row, this.readerKey, () => toChangeRecord(row, this.caller, now))
        : toChangeRecord(row, this.caller, now)
      if (!this.inboxOnly || inbox) this.queue.push(record)
    }
    // While catching up, the log itself is read; live rows up to here are already in the queue.
    if (!this.caughtUp) this.live = this.live.filter((row) => changeSeq(row) > this.cursor)
  }

  private close() {
    if (this.closed) return
    this.closed = true
    this.unsubscribe()
    this.signal?.removeEventListener('abort', this.onAbort)
    this.queue.length = 0
    this.live = []
    this.wake?.()
  }

  async return(): Promise<IteratorResult<ChangeRecord>> {
    this.close()
    return { done: true, value: undefined }
  }
}
