import type { Db } from '../db/client'
import { users } from '../db/tables'

/** Records a user the first time a valid session names them. */
export async function ensureUser(db: Db, userId: string, now: number): Promise<void> {
  await db.insert(users).values({ id: userId, createdAt: now }).onConflictDoNothing()
}
