export { orgUsageFigures as orgUsage, type UsageRow } from '../../shared/billing/usage-figures';
