import { QueryTypes, type Transaction } from 'sequelize';
import { Membership } from '../db/models';
import { memberLimits } from '../limits/controls';

/**
 * What an owner set on a member and keeps when the member is removed (migration 0043): their limits
 * (docs/keys.md "Member limits"), web search cap and switch, as `kept_member_limits` columns.
 */
const KEPT_ATTRIBUTES = { search_cap: 'searchCap', search_enabled: 'searchEnabled', allowed_models: 'allowedModels', rpm: 'rpm', tpm: 'tpm', budget_micros: 'budgetMicros', budget_period: 'budgetPeriod' } as const;
/** The columns, as kept_member_limits and memberships name them. */
const KEPT = Object.keys(KEPT_ATTRIBUTES) as Array<keyof typeof KEPT_ATTRIBUTES>;

/**
 * Keeps a departing member's limits, search cap and switch (only when they have any: a member with
 * none leaves nothing, and forgets what an earlier removal kept), in the removal's transaction.
 */
export async function keepLimitsOf(m: Membership, transaction: Transaction): Promise<void> {
  const sequelize = Membership.sequelize!;
  await sequelize.query('DELETE FROM kept_member_limits WHERE org_id = :org AND user_id = :user', { replacements: { org: m.orgId, user: m.userId }, transaction });
  if (!memberLimits(m) && m.searchCap == null && m.searchEnabled !== false) return;
  await sequelize.query(
    `INSERT INTO kept_member_limits (org_id, user_id, ${KEPT.join(', ')}) SELECT org_id, user_id, ${KEPT.join(', ')} FROM memberships WHERE id = :id`,
    { replacements: { id: m.id }, transaction },
  );
}

/**
 * Adds a user to an org with `role` (the one way in: an invitation redeemed, `gateway member add`),
 * with what an owner had set on them when they were last removed from it (keepLimitsOf): a member
 * removed and added back keeps their limits, search cap and switch (removing and re-inviting someone
 * never lifts what the owner set; an owner clears them on the members page). Their keys revoked by
 * the removal stay revoked. Runs in the caller's transaction.
 */
export async function addMember(orgId: string, userId: string, role: 'owner' | 'member', transaction: Transaction): Promise<Membership> {
  const [kept] = await Membership.sequelize!.query<Record<keyof typeof KEPT_ATTRIBUTES, unknown>>(
    `DELETE FROM kept_member_limits WHERE org_id = :org AND user_id = :user RETURNING ${KEPT.join(', ')}`,
    { replacements: { org: orgId, user: userId }, type: QueryTypes.SELECT, transaction },
  );
  const values: Record<string, unknown> = { orgId, userId, role };
  if (kept) for (const column of KEPT) values[KEPT_ATTRIBUTES[column]] = kept[column];
  return Membership.create(values as never, { transaction });
}
