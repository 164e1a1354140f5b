import type { Db } from '../db/client'
import type { Logger } from '../logger'
import type { ImageStore } from '../storage/images'
import type { ChangeFollower } from './change-follower'
import type { WebhookPolicy } from './webhooks'

/** The one source of "now" for every rule that depends on time: leases, links, expiry. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** Limits the domain enforces that come from configuration. */
export interface DomainLimits {
  /** Largest accepted image, in bytes. */
  uploadBytes: number
  /** Per-user quotas: items, and bytes of stored images. */
  maxItemsPerUser: number
  maxImageBytesPerUser: number
  /** Fresh claims after which an item is stuck and claim next passes it over. */
  maxClaimAttempts: number
  /** Claim-next requests waiting at once: in this process, and per caller. */
  maxWaiters: number
  maxWaitersPerCaller: number
}

/**
 * Everything a domain function needs besides the caller and its input. REST, GraphQL and every
 * other front end build one `Deps` and pass it through: `(deps, caller, input)`.
 */
export interface Deps {
  db: Db
  images: ImageStore
  clock: Clock
  limits: DomainLimits
  logger: Logger
  /** Follows the change log, so waiting requests and streams learn of changes from any process. */
  changes: ChangeFollower
  /** Webhook settings (WEBHOOK_*); absent: the defaults, private networks refused. */
  webhooks?: WebhookPolicy
}
