import { fn, col } from 'sequelize';
import { SearchUsage } from '../db/models';
import { periodBounds, periodOf } from './period';

export { periodUsage } from './entitlements';

/**
 * The billing line of an org's web search for a period, from the ledger: paid overage (charged in the
 * next cycle) per provider, with the searches that were free (allowance) or on the org's own key.
 */
export async function searchBillingLine(orgId: string, period: string) {
  const rows = (await SearchUsage.findAll({
    attributes: ['provider', 'kind', 'chargeClass', [fn('COUNT', col('id')), 'n'], [fn('COALESCE', fn('SUM', col('price_micros')), 0), 'micros']],
    where: { orgId, period },
    group: ['provider', 'kind', 'chargeClass'],
    raw: true,
  })) as unknown as Array<{ provider: string; kind: string; chargeClass: string; n: string; micros: string }>;
  const counts = { allowance: 0, overage: 0, own_key: 0 };
  let amount = 0;
  const lines = rows
    .filter((r) => r.chargeClass === 'overage')
    .map((r) => ({ provider: r.provider, kind: r.kind, quantity: Number(r.n), amount_micros: Number(r.micros) }))
    .sort((a, b) => a.provider.localeCompare(b.provider) || a.kind.localeCompare(b.kind));
  for (const r of rows) counts[r.chargeClass as keyof typeof counts] += Number(r.n);
  for (const l of lines) amount += l.amount_micros;
  const { end } = periodBounds(period);
  return {
    object: 'search_billing_line',
    org_id: orgId,
    period,
    status: period === periodOf() ? 'accruing' : 'closed',
    bills_in: periodOf(end),
    searches: counts,
    overage_amount_micros: amount,
    lines,
  };
}
