import type { QueryRow } from '../db/client'
import { claimantOf, type Caller } from './caller'
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

/** The columns every item query selects, in the order `toItemView` reads them. */
export const ITEM_COLUMNS =
  'id, type, status, workflow_status, title, summary, action_note, resolution_note, tags, requested_action, ' +
  'destination_kind, destination_name, claim_kind, claim_id, claim_name, lease_expires_at, image_key, image_type, ' +
  'created_at, updated_at'

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
export function toItemRecord(row: QueryRow, caller: Caller, now: number): ItemRecord {
  const leaseMs = row.lease_expires_at === null ? null : Number(row.lease_expires_at)
  const live = row.claim_id !== null && leaseMs !== null && leaseMs > now
  const me = claimantOf(caller)
  const mine = live && row.claim_kind === me.kind && row.claim_id === me.id
  const createdAtMs = Number(row.created_at)
  return {
    view: {
      id: String(row.id),
      type: row.type as ItemType,
      status: row.status as ExtractionStatus,
      workflow_status: row.workflow_status as WorkflowStatus,
      title: str(row.title),
      summary: str(row.summary),
      action_note: str(row.action_note),
      resolution_note: str(row.resolution_note),
      tags: JSON.parse(String(row.tags)),
      requested_action: str(row.requested_action) as RequestedAction | null,
      destination_kind: str(row.destination_kind),
      destination_name: str(row.destination_name),
      claim_status: !live ? 'available' : mine ? 'mine' : 'claimed',
      claimed_by: live
        ? { kind: row.claim_kind as Claimant['kind'], id: String(row.claim_id), name: str(row.claim_name) }
        : null,
      lease_expires_at: live ? iso(leaseMs!) : null,
      created_at: iso(createdAtMs),
      updated_at: iso(Number(row.updated_at)),
    },
    imageKey: str(row.image_key),
    imageType: str(row.image_type),
    createdAtMs,
  }
}
