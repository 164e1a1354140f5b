import type { ChangeFollower } from './change-follower'

/** One waiting claim-next request: `wake` makes it try again now. */
export interface Waiter {
  wake(): void
}

interface Group {
  /** Oldest first: the longest waiter gets the next item. */
  waiting: Set<Waiter>
}

/**
 * The claim-next requests of one process that are waiting for work, grouped by user and by
 * filter. A change to a user's items wakes the OLDEST waiter of each filter group, not all of
 * them: if it finds nothing, nobody else with the same filter would either, so 1,000 idle
 * waiters cost one claim attempt per filter per change, not 1,000. A waiter that claims
 * something passes the wake to the next in its group, since there may be more.
 */
export class ClaimWaiters {
  private readonly users = new Map<
    string,
    { groups: Map<string, Group>; unsubscribe: () => void }
  >()
  private readonly perCaller = new Map<string, number>()
  private total = 0

  constructor(private readonly changes: ChangeFollower) {}

  get size(): number {
    return this.total
  }

  waitingFor(caller: string): number {
    return this.perCaller.get(caller) ?? 0
  }

  add(userId: string, caller: string, filterKey: string, waiter: Waiter): () => void {
    let user = this.users.get(userId)
    if (!user) {
      const groups = new Map<string, Group>()
      const unsubscribe = this.changes.subscribe(userId, () => {
        for (const group of groups.values()) group.waiting.values().next().value?.wake()
      })
      this.users.set(userId, (user = { groups, unsubscribe }))
    }
    let group = user.groups.get(filterKey)
    if (!group) user.groups.set(filterKey, (group = { waiting: new Set() }))
    group.waiting.add(waiter)
    this.total++
    this.perCaller.set(caller, this.waitingFor(caller) + 1)
    const entry = user
    const mine = group
    return () => {
      if (!mine.waiting.delete(waiter)) return
      this.total--
      const n = this.waitingFor(caller) - 1
      if (n > 0) this.perCaller.set(caller, n)
      else this.perCaller.delete(caller)
      if (mine.waiting.size === 0) entry.groups.delete(filterKey)
      if (entry.groups.size === 0) entry.unsubscribe(), this.users.delete(userId)
    }
  }

  /** After a waiter claimed an item, the next one in its group tries too: more may be there. */
  passOn(userId: string, filterKey: string): void {
    this.users.get(userId)?.groups.get(filterKey)?.waiting.values().next().value?.wake()
  }
}
