import type { RawRow } from '../db/client'
import type { Caller, Claimant } from './caller'
import { ITEM_COLUMNS_AS, toItemRecord, type Item } from './item'

/** What the change log records (CONTRACT 8). */
export const CHANGE_ACTIONS = [
  'created',
  'claim',
  'renew',
  'release',
  'done',
  'reopen',
  'note',
  'correction',
  'revoke',
  'deleted',
] as const
export type ChangeAction = (typeof CHANGE_ACTIONS)[number]

/**
 * One change to one of the reader's items. `seq` only grows, in the order the database applied
 * the changes; `item` is the item as it is when the record is read, as the reader sees it, and
 * null once the item is deleted.
 */
export interface ChangeRecord {
  seq: string
  at: number
  itemId: string
  action: ChangeAction
  actor: Claimant | null
  item: Item | null
}

/**
 * A change-log row joined with its item as it is now. Every reader of the log (the feed, the
 * streams, the follower, the webhook dispatcher) selects this, and `toChangeRecord` reads it.
 * A `deleted` record keeps the item's requested action in `to`, so inbox streams still hear of it.
 */
export const CHANGE_SELECT = `SELECT e.id, e.at, e.item_id, e.action, e.actor_kind, e.actor_id, e.actor_name, e."to", e.user_id,
  ${ITEM_COLUMNS_AS('i')} FROM item_events e LEFT JOIN items i ON i.id = e.item_id AND i.user_id = e.user_id`
const EVENT_COLUMNS = 9

export const changeSeq = (row: RawRow) => Number(row[0])
export const changeUser = (row: RawRow) => String(row[8])

/** A row of CHANGE_SELECT as `caller` sees it; `inbox` says whether the item has a requested action. */
export function toChangeRecord(
  row: RawRow,
  caller: Caller,
  now: number,
): { record: ChangeRecord; inbox: boolean } {
  const r = row as unknown[]
  const itemRow = Array.prototype.slice.call(r, EVENT_COLUMNS)
  const item =
    itemRow[0] === null || itemRow[0] === undefined ? null : toItemRecord(itemRow, caller, now).item
  const action = String(r[3]) as ChangeAction
  const actor: Claimant | null =
    r[4] === null || r[4] === undefined
      ? null
      : {
          kind: r[4] as Claimant['kind'],
          id: String(r[5]),
          name: r[6] === null ? null : String(r[6]),
        }
  const inbox = item
    ? item.requestedAction !== null
    : action === 'deleted' && r[7] !== null && r[7] !== undefined
  return {
    record: { seq: String(r[0]), at: Number(r[1]), itemId: String(r[2]), action, actor, item },
    inbox,
  }
}
