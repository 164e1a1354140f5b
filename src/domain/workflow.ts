import type { BatchStatement } from '../db/client'
import { randomBytes } from 'node:crypto'
import { AppError, invalid, invalidField } from '../errors'
import { claimantOf, requireScope, type Caller, type Claimant } from './caller'
import { tagSignatureSql } from './tag-signature'
import { claimSql, leaseEnd } from './claims'
import type { Deps } from './deps'
import { iso } from './ids'
import { ITEM_COLUMNS, toItemRecord, type Item, type WorkflowStatus } from './item'
import { findItemRecord, visibleItem } from './items'
import { LIMITS, normalizeTags, text, wholeNumber } from './rules'

/**
 * A PATCH as every front end sends it (SPEC 4.3, CONTRACT 4 and 7), already of the right types.
 * The domain checks what the fields mean together; `checkWorkflowChange` turns it into a
 * `WorkflowChange`.
 */
export interface WorkflowChangeInput {
  claimAction?: 'claim' | 'release' | 'revoke'
  leaseSeconds?: number
  retryAfterSeconds?: number
  leaseId?: string
  workflowStatus?: WorkflowStatus
  resolutionNote?: string | null
  corrections?: Corrections
}

export interface Corrections {
  title?: string | null
  summary?: string | null
  actionNote?: string | null
  tags?: string[]
}

/** The claim step of a change: each action carries only what it can use. */
export type ClaimStep =
  | { action: 'claim'; leaseSeconds: number }
  | { action: 'release'; retryAfterSeconds: number | null }
  | { action: 'revoke' }

export interface WorkflowChange {
  claim?: ClaimStep
  workflowStatus?: WorkflowStatus
  resolutionNote?: string | null
  corrections?: Corrections
  /** Fencing: apply only while the caller holds the live lease with this id. */
  leaseId?: string
}

/** The columns corrections write, by correction field. */
const CORRECTION_COLUMNS = {
  title: 'title',
  summary: 'summary',
  actionNote: 'action_note',
  tags: 'tags',
} as const

/** What a PATCH means: one rule per field, in domain spelling. */
export function checkWorkflowChange(input: WorkflowChangeInput): WorkflowChange {
  const given = Object.values(input).some((v) => v !== undefined)
  if (!given) throw invalid('The change is empty; send at least one property.')
  const change: WorkflowChange = {}
  const action = input.claimAction
  if (input.leaseSeconds !== undefined && action !== 'claim')
    throw invalidField('leaseSeconds', 'is only allowed when claiming')
  if (input.retryAfterSeconds !== undefined && action !== 'release')
    throw invalidField('retryAfterSeconds', 'is only allowed when releasing')
  if (action === 'claim') {
    change.claim = {
      action,
      leaseSeconds: wholeNumber(
        'leaseSeconds',
        input.leaseSeconds,
        1,
        LIMITS.leaseSeconds,
        LIMITS.defaultLeaseSeconds,
      ),
    }
  } else if (action === 'release') {
    const retry =
      input.retryAfterSeconds === undefined
        ? null
        : wholeNumber('retryAfterSeconds', input.retryAfterSeconds, 1, LIMITS.retryAfterSeconds, 0)
    change.claim = { action, retryAfterSeconds: retry }
  } else if (action === 'revoke') {
    change.claim = { action }
  }
  if (input.leaseId !== undefined) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(input.leaseId))
      throw invalidField('leaseId', 'is not a lease id this service handed out')
    change.leaseId = input.leaseId
  }
  if (input.workflowStatus !== undefined) change.workflowStatus = input.workflowStatus
  if (input.resolutionNote !== undefined)
    change.resolutionNote = text('resolutionNote', input.resolutionNote, LIMITS.note)
  const c = input.corrections
  if (c !== undefined) {
    const fields = Object.keys(c).filter((k) => c[k as keyof Corrections] !== undefined)
    if (fields.length === 0) throw invalidField('corrections', 'must hold at least one correction')
    change.corrections = {}
    if (c.title !== undefined)
      change.corrections.title = text('corrections.title', c.title, LIMITS.title)
    if (c.summary !== undefined)
      change.corrections.summary = text('corrections.summary', c.summary, LIMITS.summary)
    if (c.actionNote !== undefined)
      change.corrections.actionNote = text('corrections.actionNote', c.actionNote, LIMITS.note)
    if (c.tags !== undefined) change.corrections.tags = normalizeTags('corrections.tags', c.tags)
  }
  return change
}

/** Claim actions, status changes and resolution notes are work; corrections are metadata. */
function touchesWork(change: WorkflowChange): boolean {
  return (
    change.claim !== undefined ||
    change.workflowStatus !== undefined ||
    change.resolutionNote !== undefined
  )
}

/** Who may send what: work needs the scope; corrections and the override are the signed-in owner's alone. */
function authorize(caller: Caller, change: WorkflowChange): void {
  if (touchesWork(change)) requireScope(caller, 'update_workflow_status')
  if (change.corrections && caller.kind !== 'user') {
    throw new AppError(
      'forbidden',
      'Corrections can only be sent from a signed-in session, not with an agent token.',
    )
  }
  if (change.claim?.action === 'revoke' && caller.kind !== 'user') {
    throw new AppError(
      'forbidden',
      'Only the signed-in owner can revoke a claim; an agent releases its own.',
    )
  }
}

/** Whether an agent token still works (it may have been revoked since the request was authenticated). */
export async function tokenStillActive(deps: Deps, tokenId: string, now: number): Promise<boolean> {
  const rows = await deps.db.$query(`SELECT 1 AS ok WHERE ${claimSql.tokenActive('?', '?')}`, [
    tokenId,
    now,
  ])
  return rows.length > 0
}

/** A new lease id: unguessable, URL-safe. */
export const newLeaseId = () => `lse_${randomBytes(12).toString('base64url')}`

/**
 * Applies a change atomically and race-free: the rules are the WHERE clause of one conditional
 * UPDATE, evaluated by the database inside one write transaction (`batch`). Change records are
 * inserted before the UPDATE under the same condition, so they see the old state and exist
 * exactly when the UPDATE applied. No read-then-write in the application: this holds across
 * processes sharing the database file, and against a Turso primary.
 */
export async function updateItem(
  deps: Deps,
  caller: Caller,
  id: string,
  input: WorkflowChangeInput,
): Promise<Item> {
  const change = checkWorkflowChange(input)
  authorize(caller, change)
  const me = claimantOf(caller)
  const claim = change.claim
  // A claim guards the work, not the owner's metadata; the owner's override ends it first.
  const guardedByClaims = touchesWork(change) && claim?.action !== 'revoke'

  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.clock.now()
    const p: Record<string, string | number | null> = {
      id,
      uid: caller.userId,
      now,
      ck: me.kind,
      cid: me.id,
      cname: me.name,
      rev: randomBytes(9).toString('base64url'),
    }
    const live = claimSql.live(':now')
    const liveOther = claimSql.heldByOther(':now', ':ck', ':cid')
    const liveMine = claimSql.heldBy(':now', ':ck', ':cid')
    let guard = 'id = :id AND user_id = :uid'
    if (caller.kind === 'agent_token') guard += ` AND ${claimSql.tokenActive(':cid', ':now')}`
    if (guardedByClaims) guard += ` AND NOT ${liveOther}`
    if (change.leaseId !== undefined)
      (guard += ` AND ${liveMine} AND lease_id = :leaseId`), (p.leaseId = change.leaseId)
    if (change.workflowStatus)
      (guard += ' AND workflow_status <> :target'), (p.target = change.workflowStatus)

    const set = ['updated_at = :now', 'revision = :rev']
    const events: string[] = []
    const event = (action: string, from: string, to: string, note: string, extra = '') =>
      events.push(
        `INSERT INTO item_events (item_id, user_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note)
         SELECT id, user_id, :now, :ck, :cid, :cname, ${action}, ${from}, ${to}, ${note} FROM items WHERE ${guard}${extra}`,
      )
    const clearClaim = [
      'claim_kind = NULL',
      'claim_id = NULL',
      'claim_name = NULL',
      'lease_expires_at = NULL',
      'lease_id = NULL',
    ]

    // 1. claim step, 2. workflow status. Marking done releases the caller's claim; nobody
    // else's can be live here, since the guard refused that.
    let holder: 'keep' | 'caller' | 'nobody' = 'keep'
    if (claim?.action === 'claim') {
      holder = 'caller'
      p.lease = leaseEnd(caller, now, claim.leaseSeconds)
      p.lid = newLeaseId()
      p.leaseNote = `lease ${claim.leaseSeconds}s`
      event(
        `CASE WHEN ${liveMine} THEN 'renew' ELSE 'claim' END`,
        `CASE WHEN ${liveMine} THEN 'claimed' ELSE 'available' END`,
        `'claimed'`,
        ':leaseNote',
      )
      // A renewal keeps the lease id and the attempt count; a fresh claim makes a new lease.
      set.push(
        `lease_id = CASE WHEN ${liveMine} THEN lease_id ELSE :lid END`,
        `attempts = CASE WHEN ${liveMine} THEN attempts ELSE attempts + 1 END`,
        'available_at = NULL',
      )
    } else if (claim?.action === 'release') {
      holder = 'nobody'
      event(
        `'release'`,
        `'claimed'`,
        `'available'`,
        claim.retryAfterSeconds ? `'retry after ${claim.retryAfterSeconds}s'` : 'NULL',
        ` AND ${liveMine}`,
      )
      if (claim.retryAfterSeconds) {
        p.avail = now + claim.retryAfterSeconds * 1000
        set.push(`available_at = CASE WHEN ${liveMine} THEN :avail ELSE available_at END`)
      }
    } else if (claim?.action === 'revoke') {
      holder = 'nobody'
      event(
        `'revoke'`,
        `CASE WHEN ${live} THEN claim_id ELSE NULL END`,
        `'available'`,
        `CASE WHEN ${live} THEN claim_name ELSE NULL END`,
      )
      set.push('attempts = 0', 'available_at = NULL')
    }
    if (change.workflowStatus === 'done') {
      holder = 'nobody'
      set.push("workflow_status = 'done'")
      event(`'done'`, `'pending'`, `'done'`, 'NULL')
    } else if (change.workflowStatus === 'pending') {
      set.push("workflow_status = 'pending'", 'attempts = 0', 'available_at = NULL')
      event(`'reopen'`, `'done'`, `'pending'`, 'NULL')
    }
    if (holder === 'caller')
      set.push(
        'claim_kind = :ck',
        'claim_id = :cid',
        'claim_name = :cname',
        'lease_expires_at = :lease',
      )
    if (holder === 'nobody') set.push(...clearClaim)
    // 3. notes and corrections
    if (change.resolutionNote !== undefined) {
      p.note = change.resolutionNote
      set.push('resolution_note = :note')
      event(`'note'`, 'resolution_note', ':note', ':note')
    }
    const c = change.corrections
    if (c) {
      const fields: string[] = []
      for (const field of ['title', 'summary', 'actionNote'] as const) {
        if (c[field] === undefined) continue
        const column = CORRECTION_COLUMNS[field]
        set.push(`${column} = :c_${column}`),
          (p[`c_${column}`] = c[field] ?? null),
          fields.push(column)
      }
      if (c.tags)
        set.push('tags = :c_tags'), (p.c_tags = JSON.stringify(c.tags)), fields.push('tags')
      p.fields = fields.join(', ')
      event(`'correction'`, 'NULL', 'NULL', ':fields')
    }

    const statements: BatchStatement[] = events.map((sql) => ({ sql, args: p }))
    statements.push({
      sql: `UPDATE items SET ${set.join(', ')} WHERE ${guard} RETURNING ${ITEM_COLUMNS}`,
      args: p,
    })
    if (c?.tags) {
      const applied = 'EXISTS (SELECT 1 FROM items WHERE id = :id AND revision = :rev)'
      statements.push({ sql: `DELETE FROM item_tags WHERE item_id = :id AND ${applied}`, args: p })
      statements.push({
        sql: `INSERT INTO item_tags (item_id, user_id, tag, created_at, tags_signature)
              SELECT i.id, i.user_id, j.value, i.created_at, ${tagSignatureSql(':c_tags')}
              FROM items i, json_each(:c_tags) j WHERE i.id = :id AND i.revision = :rev`,
        args: p,
      })
    }

    const results = await deps.db.$batch(statements)
    const updated = results[events.length]?.rows[0]
    if (updated) {
      deps.changes.poke()
      return visibleItem(caller, toItemRecord(updated, caller, now).item)
    }

    // Nothing applied: say why. The read happens after the failed write, so it only names the error.
    if (caller.kind === 'agent_token' && !(await tokenStillActive(deps, caller.tokenId, now))) {
      throw new AppError('unauthorized', 'The agent token is invalid, expired or revoked.')
    }
    const current = (await findItemRecord(deps, caller, id, now)).item
    if (change.leaseId !== undefined && current.leaseId !== change.leaseId) {
      throw new AppError(
        'lease_lost',
        'The lease is no longer yours: it expired, was revoked, or was re-issued.',
        {
          lease_id: change.leaseId,
        },
      )
    }
    if (guardedByClaims && current.claimStatus === 'claimed') {
      throw new AppError(
        'claim_conflict',
        'The item is claimed by someone else until its lease ends.',
        {
          claimed_by: current.claimedBy,
          lease_expires_at: current.leaseExpiresAt === null ? null : iso(current.leaseExpiresAt),
        },
      )
    }
    if (change.workflowStatus && current.workflowStatus === change.workflowStatus) {
      throw new AppError('invalid_transition', `The item is already ${change.workflowStatus}.`, {
        workflow_status: current.workflowStatus,
      })
    }
    // The state moved between the write and the read (a lease ended, another change landed): try again.
  }
  throw new AppError('claim_conflict', 'The item kept changing; try again.')
}

export interface HistoryEvent {
  at: number
  actor: Claimant
  action: string
  from: string | null
  to: string | null
  note: string | null
}

/** Every workflow change of one of the caller's items, oldest first. */
export async function itemHistory(deps: Deps, caller: Caller, id: string): Promise<HistoryEvent[]> {
  requireScope(caller, 'read_items')
  await findItemRecord(deps, caller, id)
  return (await itemHistories(deps, caller, [id])).get(id) ?? []
}

/** The histories of several of the caller's items in one query (GraphQL lists use this). */
export async function itemHistories(
  deps: Deps,
  caller: Caller,
  ids: readonly string[],
): Promise<Map<string, HistoryEvent[]>> {
  requireScope(caller, 'read_items')
  const byItem = new Map<string, HistoryEvent[]>(ids.map((id) => [id, []]))
  if (ids.length === 0) return byItem
  // The change log also records creation and deletion; the history lists workflow changes.
  const rows = await deps.db.$query(
    `SELECT item_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note FROM item_events
     WHERE user_id = ? AND item_id IN (${ids.map(() => '?').join(', ')}) AND action NOT IN ('created', 'deleted') ORDER BY id`,
    [caller.userId, ...ids],
  )
  const s = (v: unknown) => (v === null ? null : String(v))
  for (const r of rows) {
    byItem.get(String(r.item_id))?.push({
      at: Number(r.at),
      actor: {
        kind: r.actor_kind as Claimant['kind'],
        id: String(r.actor_id),
        name: s(r.actor_name),
      },
      action: String(r.action),
      from: s(r.from),
      to: s(r.to),
      note: s(r.note),
    })
  }
  return byItem
}
