import type { RawRow } from '../db/client'
import { claimantOf, type Caller } from './caller'
import { isLiveClaim } from './claims'
import { iso } from './ids'

export const ITEM_TYPES = ['event', 'media', 'reference'] as const
export const EXTRACTION_STATUSES = ['queued', 'processing', 'extracted', 'failed'] as const
export const WORKFLOW_STATUSES = ['pending', 'done'] as const
export const REQUESTED_ACTIONS = ['calendar', 'reminder', 'save', 'workflow'] as const
export const CLAIM_STATUSES = ['available', 'claimed', 'mine'] as const

export type ItemType = (typeof ITEM_TYPES)[number]
export type ExtractionStatus = (typeof EXTRACTION_STATUSES)[number]
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number]
export type RequestedAction = (typeof REQUESTED_ACTIONS)[number]
export type ClaimStatus = (typeof CLAIM_STATUSES)[number]

export interface Claimant {
  kind: 'agent_token' | 'user'
  id: string
  name: string | null
}

/** The item as CONTRACT 2 describes it, as seen by one caller (claim_status depends on who asks). */
export interface ItemView {
  id: string
  type: ItemType
  status: ExtractionStatus
  workflow_status: WorkflowStatus
  title: string | null
  summary: string | null
  action_note: string | null
  resolution_note: string | null
  tags: string[]
  requested_action: RequestedAction | null
  destination_kind: string | null
  destination_name: string | null
  claim_status: ClaimStatus
  claimed_by: Claimant | null
  lease_expires_at: string | null
  created_at: string
  updated_at: string
  source_image_url?: string | null
}

/** The columns every item query selects, in the order `toItemRecord` reads them. */
const ITEM_COLUMN_NAMES = [
  'id', 'type', 'status', 'workflow_status', 'title', 'summary', 'action_note', 'resolution_note', 'tags', 'requested_action',
  'destination_kind', 'destination_name', 'claim_kind', 'claim_id', 'claim_name', 'lease_expires_at', 'image_key', 'image_type',
  'created_at', 'updated_at',
] as const
export const ITEM_COLUMNS = ITEM_COLUMN_NAMES.join(', ')

/** Column positions: item rows are read as arrays, the cheapest shape to build. */
const C = Object.fromEntries(ITEM_COLUMN_NAMES.map((name, i) => [name, i])) as Record<(typeof ITEM_COLUMN_NAMES)[number], number>

/** Qualifies ITEM_COLUMNS for queries that join (`i.id, i.type, …`). */
export const ITEM_COLUMNS_AS = (alias: string) =>
  ITEM_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ')

export interface ItemRecord {
  view: ItemView
  imageKey: string | null
  imageType: string | null
  createdAtMs: number
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))

/**
 * One row → the caller's view. An expired lease reads as available and shows no holder, so no
 * sweeper is ever needed.
 */
export function toItemRecord(row: RawRow, caller: Caller, now: number): ItemRecord {
  const r = row as unknown[]
  const claimId = r[C.claim_id]
  const leaseMs = r[C.lease_expires_at] === null ? null : Number(r[C.lease_expires_at])
  const live = isLiveClaim(claimId, leaseMs, now)
  const me = claimantOf(caller)
  const mine = live && r[C.claim_kind] === me.kind && claimId === me.id
  const createdAtMs = Number(r[C.created_at])
  return {
    view: {
      id: String(r[C.id]),
      type: r[C.type] as ItemType,
      status: r[C.status] as ExtractionStatus,
      workflow_status: r[C.workflow_status] as WorkflowStatus,
      title: str(r[C.title]),
      summary: str(r[C.summary]),
      action_note: str(r[C.action_note]),
      resolution_note: str(r[C.resolution_note]),
      tags: JSON.parse(String(r[C.tags])),
      requested_action: str(r[C.requested_action]) as RequestedAction | null,
      destination_kind: str(r[C.destination_kind]),
      destination_name: str(r[C.destination_name]),
      claim_status: !live ? 'available' : mine ? 'mine' : 'claimed',
      claimed_by: live ? { kind: r[C.claim_kind] as Claimant['kind'], id: String(claimId), name: str(r[C.claim_name]) } : null,
      lease_expires_at: live ? iso(leaseMs!) : null,
      created_at: iso(createdAtMs),
      updated_at: iso(Number(r[C.updated_at])),
    },
    imageKey: str(r[C.image_key]),
    imageType: str(r[C.image_type]),
    createdAtMs,
  }
}
