import type { InArgs } from '@libsql/client'
import { claimantOf, requireScope, type Caller } from './caller'
import { claimSql } from './claims'
import { decodeCursor } from './cursor'
import { itemEnums, listLimit, oneOf, requiredTags, text } from './item-input'
import { CLAIM_STATUSES, ITEM_COLUMNS, toItemRecord } from './item-view'
import { toPage, type ItemDeps, type Page } from './items'

export interface InboxFilter {
  workflow_status?: string
  requested_action?: string
  type?: string
  destination_kind?: string
  destination_name?: string
  tag?: string
  tags?: string
  claim_status?: string
  cursor?: string
  limit?: unknown
}

/**
 * The work queue: items with a requested action, oldest first. `claim_status` is matched as the
 * caller sees it. The partial index `items_inbox` (user, workflow status, created_at, id) serves
 * the common agent query — pending, available, oldest first — without a scan or a sort.
 */
export async function listInbox(deps: ItemDeps, caller: Caller, filter: InboxFilter, now = Date.now()): Promise<Page> {
  requireScope(caller, 'read_items')
  const limit = listLimit(filter.limit)
  const cursor = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor)
  const claimStatus = filter.claim_status === undefined ? 'all' : oneOf('claim_status', filter.claim_status, ['all', ...CLAIM_STATUSES])
  const tags = requiredTags(filter.tag, filter.tags)

  const where = ['user_id = ?', 'requested_action IS NOT NULL']
  const args: InArgs = [caller.userId]
  if (filter.workflow_status !== undefined) where.push('workflow_status = ?'), args.push(itemEnums.workflowStatus(filter.workflow_status))
  if (filter.requested_action !== undefined) where.push('requested_action = ?'), args.push(itemEnums.requestedAction(filter.requested_action))
  if (filter.type !== undefined) where.push('type = ?'), args.push(itemEnums.type(filter.type))
  if (filter.destination_kind !== undefined) where.push('destination_kind = ?'), args.push(text('destination_kind', filter.destination_kind, 200))
  if (filter.destination_name !== undefined) where.push('destination_name = ?'), args.push(text('destination_name', filter.destination_name, 200))
  for (const tag of tags) {
    where.push('EXISTS (SELECT 1 FROM item_tags t WHERE t.item_id = items.id AND t.tag = ?)')
    args.push(tag)
  }
  const me = claimantOf(caller)
  if (claimStatus === 'available') {
    where.push(`NOT ${claimSql.live('?')}`), args.push(now)
  } else if (claimStatus === 'mine') {
    where.push(claimSql.heldBy('?', '?', '?')), args.push(now, me.kind, me.id)
  } else if (claimStatus === 'claimed') {
    where.push(claimSql.heldByOther('?', '?', '?')), args.push(now, me.kind, me.id)
  }
  if (cursor) where.push('(created_at, id) > (?, ?)'), args.push(cursor.createdAt, cursor.id)
  args.push(limit + 1)

  const rows = await deps.db.$rows(`SELECT ${ITEM_COLUMNS} FROM items WHERE ${where.join(' AND ')} ORDER BY created_at, id LIMIT ?`, args)
  return toPage(rows.map((row) => toItemRecord(row, caller, now)), limit)
}
