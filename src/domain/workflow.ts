import type { InStatement } from '@libsql/client'
import { randomBytes } from 'node:crypto'
import type { Db } from '../db/client'
import { AppError, invalid } from '../errors'
import { claimantOf, requireScope, type Caller } from './caller'
import { claimSql } from './claims'
import { iso } from './ids'
import { LIMITS, normalizeTags, oneOf, text } from './item-input'
import { ITEM_COLUMNS, WORKFLOW_STATUSES, toItemRecord, type ItemView, type WorkflowStatus } from './item-view'
import { findItemRecord } from './items'

export const DEFAULT_LEASE_SECONDS = 300
export const MAX_LEASE_SECONDS = 86_400

/** A PATCH body after validation (SPEC 4.3, CONTRACT 4). */
export interface WorkflowChange {
  claimAction?: 'claim' | 'release'
  leaseSeconds: number
  workflowStatus?: WorkflowStatus
  resolutionNote?: string | null
  corrections?: { title?: string | null; summary?: string | null; action_note?: string | null; tags?: string[] }
}

const PATCH_FIELDS = new Set(['workflow_status', 'resolution_note', 'claim_action', 'lease_seconds', 'corrections'])
const CORRECTION_FIELDS = new Set(['title', 'summary', 'action_note', 'tags'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Validates a PATCH body. Unknown properties, an empty body, and a lease without a claim are 400s. */
export function parseWorkflowChange(body: unknown): WorkflowChange {
  if (!isObject(body)) throw invalid('The body must be a JSON object.')
  const keys = Object.keys(body)
  if (keys.length === 0) throw invalid('The body is empty; send at least one property.')
  for (const key of keys) if (!PATCH_FIELDS.has(key)) throw invalid(`Unknown property "${key}".`, { field: key })

  const change: WorkflowChange = { leaseSeconds: DEFAULT_LEASE_SECONDS }
  if (body.claim_action !== undefined) change.claimAction = oneOf('claim_action', body.claim_action, ['claim', 'release'] as const)
  if (body.lease_seconds !== undefined) {
    if (change.claimAction !== 'claim') throw invalid('lease_seconds is only allowed with claim_action "claim".', { field: 'lease_seconds' })
    const n = body.lease_seconds
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_LEASE_SECONDS) {
      throw invalid(`lease_seconds must be a whole number from 1 to ${MAX_LEASE_SECONDS}.`, { field: 'lease_seconds' })
    }
    change.leaseSeconds = n
  }
  if (body.workflow_status !== undefined) change.workflowStatus = oneOf('workflow_status', body.workflow_status, WORKFLOW_STATUSES)
  if (body.resolution_note !== undefined) change.resolutionNote = text('resolution_note', body.resolution_note, LIMITS.note)
  if (body.corrections !== undefined) {
    const c = body.corrections
    if (!isObject(c) || Object.keys(c).length === 0) throw invalid('corrections must be an object with at least one of title, summary, action_note, tags.', { field: 'corrections' })
    for (const key of Object.keys(c)) if (!CORRECTION_FIELDS.has(key)) throw invalid(`Unknown correction "${key}".`, { field: `corrections.${key}` })
    change.corrections = {}
    if (c.title !== undefined) change.corrections.title = text('corrections.title', c.title, LIMITS.title)
    if (c.summary !== undefined) change.corrections.summary = text('corrections.summary', c.summary, LIMITS.summary)
    if (c.action_note !== undefined) change.corrections.action_note = text('corrections.action_note', c.action_note, LIMITS.note)
    if (c.tags !== undefined) {
      if (c.tags === null) throw invalid('corrections.tags must be an array of strings.', { field: 'corrections.tags' })
      change.corrections.tags = normalizeTags('corrections.tags', c.tags)
    }
  }
  return change
}

/** Claim actions, status changes and resolution notes are work; corrections are metadata. */
function touchesWork(change: WorkflowChange): boolean {
  return change.claimAction !== undefined || change.workflowStatus !== undefined || change.resolutionNote !== undefined
}

/** Who may send what: workflow changes need the scope; corrections are the signed-in owner's alone. */
function authorize(caller: Caller, change: WorkflowChange): void {
  if (touchesWork(change)) requireScope(caller, 'update_workflow_status')
  if (change.corrections && caller.kind !== 'user') {
    throw new AppError('forbidden', 'Corrections can only be sent from a signed-in session, not with an agent token.')
  }
}

/**
 * Applies a PATCH atomically and race-free: the rules are the WHERE clause of one conditional
 * UPDATE, evaluated by the database inside one write transaction (`batch`). History rows are
 * inserted before the UPDATE under the same condition, so they see the old state and exist
 * exactly when the UPDATE applied. No read-then-write in the application: this holds across
 * processes sharing the database file, and against a Turso primary.
 */
export async function updateItem(db: Db, caller: Caller, id: string, body: unknown, now = Date.now()): Promise<ItemView> {
  const change = parseWorkflowChange(body)
  authorize(caller, change)
  const me = claimantOf(caller)
  // A claim guards the work, not the owner's metadata: only work is refused by another's claim.
  const work = touchesWork(change)

  for (let attempt = 0; attempt < 3; attempt++) {
    const revision = randomBytes(9).toString('base64url')
    const p: Record<string, string | number | null> = {
      id, uid: caller.userId, now, ck: me.kind, cid: me.id, cname: me.name, rev: revision,
    }
    const liveOther = claimSql.heldByOther(':now', ':ck', ':cid')
    const liveMine = claimSql.heldBy(':now', ':ck', ':cid')
    let guard = 'id = :id AND user_id = :uid'
    if (work) guard += ` AND NOT ${liveOther}`
    if (change.workflowStatus) guard += ' AND workflow_status <> :target', (p.target = change.workflowStatus)

    const set = ['updated_at = :now', 'revision = :rev']
    const events: string[] = []
    const event = (action: string, from: string, to: string, note: string, extra = '') =>
      events.push(
        `INSERT INTO item_events (item_id, user_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note)
         SELECT id, user_id, :now, :ck, :cid, :cname, ${action}, ${from}, ${to}, ${note} FROM items WHERE ${guard}${extra}`,
      )

    // 1. claim action, 2. workflow status. Marking done releases the caller's claim; nobody
    // else's can be live here, since the guard refused that.
    let holder: 'keep' | 'caller' | 'nobody' = 'keep'
    if (change.claimAction === 'claim') {
      holder = 'caller'
      p.lease = now + change.leaseSeconds * 1000
      p.leaseNote = `lease ${change.leaseSeconds}s`
      event(`CASE WHEN ${liveMine} THEN 'renew' ELSE 'claim' END`, `CASE WHEN ${liveMine} THEN 'claimed' ELSE 'available' END`, `'claimed'`, ':leaseNote')
    } else if (change.claimAction === 'release') {
      holder = 'nobody'
      event(`'release'`, `'claimed'`, `'available'`, 'NULL', ` AND ${liveMine}`)
    }
    if (change.workflowStatus === 'done') {
      holder = 'nobody'
      set.push("workflow_status = 'done'")
      event(`'done'`, `'pending'`, `'done'`, 'NULL')
    } else if (change.workflowStatus === 'pending') {
      set.push("workflow_status = 'pending'")
      event(`'reopen'`, `'done'`, `'pending'`, 'NULL')
    }
    if (holder === 'caller') set.push('claim_kind = :ck', 'claim_id = :cid', 'claim_name = :cname', 'lease_expires_at = :lease')
    if (holder === 'nobody') set.push('claim_kind = NULL', 'claim_id = NULL', 'claim_name = NULL', 'lease_expires_at = NULL')
    // 3. notes and corrections
    if (change.resolutionNote !== undefined) {
      p.note = change.resolutionNote
      set.push('resolution_note = :note')
      event(`'note'`, 'resolution_note', ':note', ':note')
    }
    const statements: InStatement[] = []
    const c = change.corrections
    if (c) {
      const fields = Object.keys(c)
      for (const field of ['title', 'summary', 'action_note'] as const) {
        if (c[field] !== undefined) set.push(`${field} = :c_${field}`), (p[`c_${field}`] = c[field] ?? null)
      }
      if (c.tags) set.push('tags = :c_tags'), (p.c_tags = JSON.stringify(c.tags))
      p.fields = fields.join(', ')
      event(`'correction'`, 'NULL', 'NULL', ':fields')
    }

    statements.push(...events.map((sql) => ({ sql, args: p })))
    statements.push({ sql: `UPDATE items SET ${set.join(', ')} WHERE ${guard} RETURNING ${ITEM_COLUMNS}`, args: p })
    if (c?.tags) {
      const applied = 'EXISTS (SELECT 1 FROM items WHERE id = :id AND revision = :rev)'
      statements.push({ sql: `DELETE FROM item_tags WHERE item_id = :id AND ${applied}`, args: p })
      statements.push({
        sql: `INSERT INTO item_tags (item_id, user_id, tag, created_at)
              SELECT i.id, i.user_id, j.value, i.created_at FROM items i, json_each(:c_tags) j WHERE i.id = :id AND i.revision = :rev`,
        args: p,
      })
    }

    const results = await db.$client.batch(statements, 'write')
    const updated = results[events.length]!.rows[0]
    if (updated) return toItemRecord(updated, caller, now).view

    // Nothing applied: say why. The read happens after the failed write, so it only names the error.
    const current = await findItemRecord(db, caller, id, now)
    if (work && current.view.claim_status === 'claimed') {
      throw new AppError('claim_conflict', 'The item is claimed by someone else until its lease ends.', {
        claimed_by: current.view.claimed_by,
        lease_expires_at: current.view.lease_expires_at,
      })
    }
    if (change.workflowStatus && current.view.workflow_status === change.workflowStatus) {
      throw new AppError('invalid_transition', `The item is already ${change.workflowStatus}.`, {
        workflow_status: current.view.workflow_status,
      })
    }
    // The state moved between the write and the read (a lease ended, another change landed): try again.
    now = Date.now()
  }
  throw new AppError('claim_conflict', 'The item kept changing; try again.')
}

export interface HistoryEvent {
  at: string
  actor: { kind: 'agent_token' | 'user'; id: string; name: string | null }
  action: string
  from: string | null
  to: string | null
  note: string | null
}

/** Every workflow change of one of the caller's items, oldest first. */
export async function itemHistory(db: Db, caller: Caller, id: string): Promise<HistoryEvent[]> {
  requireScope(caller, 'read_items')
  await findItemRecord(db, caller, id)
  return (await itemHistories(db, caller, [id])).get(id) ?? []
}

/** The histories of several of the caller's items in one query (GraphQL lists use this). */
export async function itemHistories(db: Db, caller: Caller, ids: readonly string[]): Promise<Map<string, HistoryEvent[]>> {
  requireScope(caller, 'read_items')
  const byItem = new Map<string, HistoryEvent[]>(ids.map((id) => [id, []]))
  if (ids.length === 0) return byItem
  const rows = await db.$query(
    `SELECT item_id, at, actor_kind, actor_id, actor_name, action, "from", "to", note FROM item_events
     WHERE user_id = ? AND item_id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`,
    [caller.userId, ...ids],
  )
  for (const r of rows) {
    byItem.get(String(r.item_id))?.push({
      at: iso(Number(r.at)),
      actor: { kind: r.actor_kind as HistoryEvent['actor']['kind'], id: String(r.actor_id), name: r.actor_name === null ? null : String(r.actor_name) },
      action: String(r.action),
      from: r.from === null ? null : String(r.from),
      to: r.to === null ? null : String(r.to),
      note: r.note === null ? null : String(r.note),
    })
  }
  return byItem
}
