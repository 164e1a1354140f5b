import { AppError } from '../errors'
import { claimantOf, requireScope, type Caller } from './caller'
import { claimSql, leaseEnd } from './claims'
import type { Deps } from './deps'
import {
  ITEM_COLUMNS,
  toItemRecord,
  type ClaimStatusFilter,
  type Item,
  type ItemType,
  type RequestedAction,
  type WorkflowStatus,
} from './item'
import { AS_ITEMS, type ItemReader, type ListQuery } from './item-pages'
import { decodeCursor, type Page } from './page'
import { LIMITS, filterTags, pageLimit, text, wholeNumber } from './rules'
import { newLeaseId, tokenStillActive } from './workflow'
import { ClaimWaiters } from './claim-waiters'

/** What selects work: shared by the inbox list and claim next. */
export interface WorkFilter {
  requestedAction?: RequestedAction
  type?: ItemType
  destinationKind?: string
  destinationName?: string
  /** `tag` and `tags` combined: all must match. */
  tags?: string[]
}

export interface InboxFilter extends WorkFilter {
  workflowStatus?: WorkflowStatus
  claimStatus?: ClaimStatusFilter
  cursor?: string
  limit?: number
}

/** SQL conditions on `items` for a work filter, with named parameters. */
function workWhere(filter: WorkFilter, p: ListQuery['params']): string[] {
  const where = ['user_id = :uid', 'requested_action IS NOT NULL']
  if (filter.requestedAction) where.push('requested_action = :ra'), (p.ra = filter.requestedAction)
  if (filter.type) where.push('type = :type'), (p.type = filter.type)
  if (filter.destinationKind !== undefined)
    where.push('destination_kind = :dk'),
      (p.dk = text('destinationKind', filter.destinationKind, LIMITS.destination))
  if (filter.destinationName !== undefined)
    where.push('destination_name = :dn'),
      (p.dn = text('destinationName', filter.destinationName, LIMITS.destination))
  filterTags(filter.tags).forEach((tag, i) => {
    where.push(`EXISTS (SELECT 1 FROM item_tags t WHERE t.item_id = items.id AND t.tag = :tag${i})`)
    p[`tag${i}`] = tag
  })
  return where
}

/**
 * The work queue: items with a requested action, oldest first. `claimStatus` is matched as the
 * caller sees it. The partial index `items_inbox` (user, workflow status, created_at, id) serves
 * the common agent query — pending, available, oldest first — without a scan or a sort.
 */
export async function listInbox<P = Page<Item>>(
  deps: Deps,
  caller: Caller,
  filter: InboxFilter,
  as: ItemReader<P> = AS_ITEMS as unknown as ItemReader<P>,
): Promise<P> {
  requireScope(caller, 'read_items')
  const limit = pageLimit(filter.limit)
  const cursor = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor)
  // :now, :ck and :cid (the caller as claimant) are bound by the reader.
  const p: ListQuery['params'] = { uid: caller.userId, max: deps.limits.maxClaimAttempts }
  const where = workWhere(filter, p)
  if (filter.workflowStatus) where.push('workflow_status = :ws'), (p.ws = filter.workflowStatus)
  const claimStatus = filter.claimStatus ?? 'all'
  if (claimStatus === 'available') where.push(`NOT ${claimSql.live(':now')}`)
  else if (claimStatus === 'mine') where.push(claimSql.heldBy(':now', ':ck', ':cid'))
  else if (claimStatus === 'claimed') where.push(claimSql.heldByOther(':now', ':ck', ':cid'))
  else if (claimStatus === 'claimable') where.push(claimSql.claimable(':now', ':max'))
  else if (claimStatus === 'stuck') where.push(claimSql.stuck(':now', ':max'))
  if (cursor)
    where.push('(created_at, id) > (:cat, :cid2)'), (p.cat = cursor.createdAt), (p.cid2 = cursor.id)
  const q: ListQuery = { from: 'items', where, order: 'created_at, id', params: p, limit }
  return as.read(deps, caller, deps.clock.now(), q)
}

export interface ClaimNextInput extends WorkFilter {
  leaseSeconds?: number
  waitSeconds?: number
}

export interface Lease {
  id: string
  expiresAt: number
  attempt: number
}

/** The caller's lease on an item it just claimed. */
export function leaseOf(item: Item): Lease {
  if (item.leaseId === null || item.leaseExpiresAt === null)
    throw new Error(`item ${item.id} is not held by the caller`)
  return { id: item.leaseId, expiresAt: item.leaseExpiresAt, attempt: item.attempts }
}

export type ClaimNextResult = { item: Item; lease: Lease } | { item: null; lease: null }

/** One attempt: a single statement picks the oldest claimable item and claims it. */
async function claimOnce(
  deps: Deps,
  caller: Caller,
  filter: WorkFilter,
  leaseSeconds: number,
): Promise<ClaimNextResult> {
  const now = deps.clock.now()
  const me = claimantOf(caller)
  const p: Record<string, string | number | null> = {
    uid: caller.userId,
    now,
    ck: me.kind,
    cid: me.id,
    cname: me.name,
    max: deps.limits.maxClaimAttempts,
    lease: leaseEnd(caller, now, leaseSeconds),
    lid: newLeaseId(),
    note: `lease ${leaseSeconds}s`,
  }
  const where = workWhere(filter, p)
  where.push(claimSql.claimable(':now', ':max'))
  if (caller.kind === 'agent_token') where.push(claimSql.tokenActive(':cid', ':now'))
  // The database serialises writers, so the pick and the claim are one step: two callers can
  // never receive the same item, and contention just means the next one down the queue.
  const pick = `SELECT id FROM items WHERE ${where.join(' AND ')} ORDER BY created_at, id LIMIT 1`
  const [, updated] = await deps.db.$batch([
    {
      sql: `INSERT INTO item_events (item_id, user_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note)
              SELECT id, user_id, :now, :ck, :cid, :cname, 'claim', 'available', 'claimed', :note FROM items WHERE id = (${pick})`,
      args: p,
    },
    {
      sql: `UPDATE items SET claim_kind = :ck, claim_id = :cid, claim_name = :cname, lease_expires_at = :lease, lease_id = :lid,
                attempts = attempts + 1, available_at = NULL, updated_at = :now
              WHERE id = (${pick}) RETURNING ${ITEM_COLUMNS}`,
      args: p,
    },
  ])
  const row = updated?.rows[0]
  if (!row) return { item: null, lease: null }
  const item = toItemRecord(row, caller, now).item
  return { item, lease: leaseOf(item) }
}

/** When, at the latest, something pending of this user could become claimable by time alone. */
async function nextTimedChange(deps: Deps, caller: Caller, now: number): Promise<number | null> {
  const [row] = await deps.db.$query(
    `SELECT min(t) AS t FROM (
       SELECT min(lease_expires_at) AS t FROM items
        WHERE user_id = ? AND requested_action IS NOT NULL AND workflow_status = 'pending' AND lease_expires_at > ?
       UNION ALL
       SELECT min(available_at) FROM items
        WHERE user_id = ? AND requested_action IS NOT NULL AND workflow_status = 'pending' AND available_at > ?)`,
    [caller.userId, now, caller.userId, now],
  )
  return row?.t === null || row?.t === undefined ? null : Number(row.t)
}

const registries = new WeakMap<Deps, ClaimWaiters>()

/**
 * Claim next (CONTRACT 7). With `waitSeconds`, waits until something becomes claimable:
 * woken through the change log (changes from any process, see ClaimWaiters) and by the next
 * lease or delay that runs out. A waiting request holds a timer and a place in a queue, nothing
 * else. `signal` ends the wait early (the client went away).
 */
export async function claimNext(
  deps: Deps,
  caller: Caller,
  input: ClaimNextInput,
  signal?: AbortSignal,
): Promise<ClaimNextResult> {
  requireScope(caller, 'read_items')
  requireScope(caller, 'update_workflow_status')
  const leaseSeconds = wholeNumber(
    'leaseSeconds',
    input.leaseSeconds,
    1,
    LIMITS.leaseSeconds,
    LIMITS.defaultLeaseSeconds,
  )
  const waitSeconds = wholeNumber('waitSeconds', input.waitSeconds, 0, LIMITS.waitSeconds, 0)
  const filter: WorkFilter = {
    requestedAction: input.requestedAction,
    type: input.type,
    destinationKind: input.destinationKind,
    destinationName: input.destinationName,
    tags: filterTags(input.tags),
  }
  if (waitSeconds === 0) return claimOnce(deps, caller, filter, leaseSeconds)

  let waiters = registries.get(deps)
  if (!waiters) registries.set(deps, (waiters = new ClaimWaiters(deps.changes)))
  const me = claimantOf(caller)
  const callerKey = `${me.kind}:${me.id}`
  if (
    waiters.size >= deps.limits.maxWaiters ||
    waiters.waitingFor(callerKey) >= deps.limits.maxWaitersPerCaller
  ) {
    throw new AppError(
      'rate_limited',
      'Too many claim-next requests are waiting; try again shortly.',
      { retry_after_seconds: 1 },
    )
  }
  const filterKey = JSON.stringify(filter)
  const deadline = Date.now() + waitSeconds * 1000
  let wake: () => void = () => {}
  let woken = false
  const leave = waiters.add(caller.userId, callerKey, filterKey, {
    wake: () => ((woken = true), wake()),
  })
  const registry = waiters
  /** Leaves; a wake that arrived and was not used goes on to the next waiter of the group. */
  const leaveWoken = () => {
    const unused = woken
    leave()
    if (unused) registry.passOn(caller.userId, filterKey)
  }
  const onAbort = () => wake()
  signal?.addEventListener('abort', onAbort)
  try {
    // From here on every committed change reaches us; then look once.
    await deps.changes.ready()
    for (;;) {
      // A client that went away must not be handed an item it will never see; a wake meant
      // for it goes to the next waiter of its group.
      if (signal?.aborted) return leaveWoken(), { item: null, lease: null }
      woken = false
      const result = await claimOnce(deps, caller, filter, leaseSeconds)
      if (result.item) {
        leave()
        waiters.passOn(caller.userId, filterKey)
        return result
      }
      // A token revoked (or expired) while it waits is told so, rather than kept waiting.
      if (
        caller.kind === 'agent_token' &&
        !(await tokenStillActive(deps, caller.tokenId, deps.clock.now()))
      ) {
        leaveWoken()
        throw new AppError('unauthorized', 'The agent token is invalid, expired or revoked.')
      }
      const left = deadline - Date.now()
      if (left <= 0) return leaveWoken(), result
      const now = deps.clock.now()
      const timed = await nextTimedChange(deps, caller, now)
      if (woken) continue
      const sleep = Math.min(left, timed === null ? left : Math.max(timed - now, 0) + 5)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, sleep)
        wake = () => (clearTimeout(timer), resolve())
      })
      wake = () => {}
    }
  } finally {
    signal?.removeEventListener('abort', onAbort)
    leave()
  }
}
