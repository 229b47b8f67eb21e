export { orgUsageFigures as orgUsage, orgUsageBetween, type UsageRow } from '../../shared/billing/usage-figures';
