import type { ResourceDef } from '../define';
import { organizations, plans, users } from './tenancy';
import { inferenceModels, platformCredentials, providers, tokenizerProfiles } from './catalog';
import { modelPools } from './pools';
import { searchProviders, searchSettings } from './search';
import { billingRecords, inviteCodes, paymentCustomers, referrals, reservations, wallets } from './commerce';
import { auditLogs, schedulerEndpoints } from './operations';

/** Every generic resource of the management API (custom routes live in api/admin/routes). */
export function resourceDefs(): ResourceDef[] {
  return [
    organizations,
    plans,
    providers,
    platformCredentials,
    inferenceModels,
    modelPools,
    tokenizerProfiles,
    searchProviders,
    searchSettings,
    paymentCustomers(),
    referrals,
    users,
    auditLogs,
    schedulerEndpoints,
    inviteCodes,
    wallets,
    reservations,
    billingRecords,
  ];
}
