import type { RawRow } from '../db/client'
import { claimantOf, type Caller, type Claimant } from './caller'
import { isLiveClaim } from './claims'

export const ITEM_TYPES = ['event', 'media', 'reference'] as const
export const EXTRACTION_STATUSES = ['queued', 'processing', 'extracted', 'failed'] as const
export const WORKFLOW_STATUSES = ['pending', 'done'] as const
export const REQUESTED_ACTIONS = ['calendar', 'reminder', 'save', 'workflow'] as const
export const CLAIM_STATUSES = ['available', 'claimed', 'mine'] as const
/** Inbox filter values: the caller's view, plus what claim next would pick and what is stuck. */
export const CLAIM_STATUS_FILTERS = ['all', ...CLAIM_STATUSES, 'claimable', 'stuck'] as const

export type ItemType = (typeof ITEM_TYPES)[number]
export type ExtractionStatus = (typeof EXTRACTION_STATUSES)[number]
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number]
export type RequestedAction = (typeof REQUESTED_ACTIONS)[number]
export type ClaimStatus = (typeof CLAIM_STATUSES)[number]
export type ClaimStatusFilter = (typeof CLAIM_STATUS_FILTERS)[number]

/**
 * A saved item as one caller sees it (CONTRACT 2 and 7). Timestamps are epoch milliseconds;
 * each front end renders them (REST and GraphQL as ISO 8601). `claimStatus`, `claimedBy` and
 * `leaseId` depend on who asks and when.
 */
export interface Item {
  id: string
  type: ItemType
  status: ExtractionStatus
  workflowStatus: WorkflowStatus
  title: string | null
  summary: string | null
  actionNote: string | null
  resolutionNote: string | null
  tags: string[]
  requestedAction: RequestedAction | null
  destinationKind: string | null
  destinationName: string | null
  claimStatus: ClaimStatus
  claimedBy: Claimant | null
  leaseExpiresAt: number | null
  /** The caller's own live lease; null for everyone else. */
  leaseId: string | null
  attempts: number
  availableAt: number | null
  createdAt: number
  updatedAt: number
}

/** The single fetch adds the signed image link. */
export interface ItemWithImage extends Item {
  sourceImageUrl: string | null
}

/** The columns every item query selects, in the order `toItemRecord` reads them. */
const ITEM_COLUMN_NAMES = [
  'id',
  'type',
  'status',
  'workflow_status',
  'title',
  'summary',
  'action_note',
  'resolution_note',
  'tags',
  'requested_action',
  'destination_kind',
  'destination_name',
  'claim_kind',
  'claim_id',
  'claim_name',
  'lease_expires_at',
  'lease_id',
  'attempts',
  'available_at',
  'image_key',
  'image_type',
  'created_at',
  'updated_at',
] as const
export const ITEM_COLUMNS = ITEM_COLUMN_NAMES.join(', ')

/** Qualifies ITEM_COLUMNS for queries that join (`i.id, i.type, …`). */
export const ITEM_COLUMNS_AS = (alias: string) =>
  ITEM_COLUMN_NAMES.map((c) => `${alias}.${c}`).join(', ')

/** Column positions: item rows are read as arrays, the cheapest shape to build. */
const C = Object.fromEntries(ITEM_COLUMN_NAMES.map((name, i) => [name, i])) as Record<
  (typeof ITEM_COLUMN_NAMES)[number],
  number
>

/** An item with what only the domain sees: where its image is stored. */
export interface ItemRecord {
  item: Item
  image: { key: string; type: string } | null
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

/** The part of an item that depends on who asks and when (CONTRACT 2 and 7). */
export interface ClaimView {
  claimStatus: ClaimStatus
  claimedBy: Claimant | null
  leaseExpiresAt: number | null
  leaseId: string | null
}

/**
 * The claim as `caller` sees it at `now`: an expired lease reads as available and shows no
 * holder, so no sweeper is ever needed; the lease id is shown to its holder only.
 */
export function claimView(
  kind: unknown,
  claimId: unknown,
  name: unknown,
  leaseMs: number | null,
  leaseId: unknown,
  caller: Caller,
  now: number,
): ClaimView {
  if (!isLiveClaim(claimId, leaseMs, now)) {
    return { claimStatus: 'available', claimedBy: null, leaseExpiresAt: null, leaseId: null }
  }
  const me = claimantOf(caller)
  const mine = kind === me.kind && claimId === me.id
  return {
    claimStatus: mine ? 'mine' : 'claimed',
    claimedBy: { kind: kind as Claimant['kind'], id: String(claimId), name: str(name) },
    leaseExpiresAt: leaseMs,
    leaseId: mine ? str(leaseId) : null,
  }
}

/** One row → the caller's view. */
export function toItemRecord(row: RawRow, caller: Caller, now: number): ItemRecord {
  const r = row as unknown[]
  const claim = claimView(
    r[C.claim_kind],
    r[C.claim_id],
    r[C.claim_name],
    num(r[C.lease_expires_at]),
    r[C.lease_id],
    caller,
    now,
  )
  const imageKey = str(r[C.image_key])
  return {
    item: {
      id: String(r[C.id]),
      type: r[C.type] as ItemType,
      status: r[C.status] as ExtractionStatus,
      workflowStatus: r[C.workflow_status] as WorkflowStatus,
      title: str(r[C.title]),
      summary: str(r[C.summary]),
      actionNote: str(r[C.action_note]),
      resolutionNote: str(r[C.resolution_note]),
      tags: JSON.parse(String(r[C.tags])),
      requestedAction: str(r[C.requested_action]) as RequestedAction | null,
      destinationKind: str(r[C.destination_kind]),
      destinationName: str(r[C.destination_name]),
      ...claim,
      attempts: Number(r[C.attempts] ?? 0),
      availableAt: num(r[C.available_at]),
      createdAt: Number(r[C.created_at]),
      updatedAt: Number(r[C.updated_at]),
    },
    image: imageKey
      ? { key: imageKey, type: str(r[C.image_type]) ?? 'application/octet-stream' }
      : null,
  }
}
