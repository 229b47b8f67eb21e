import crypto from 'crypto';
import Joi from 'joi';
import { CreditReservation, InviteCode, Organization, PaymentAccount, Referral, Wallet, BillingRecord } from '../../../../shared/db/models';
import { mailInvitation } from '../../../web/invitation-notice';
import { config } from '../../../../shared/config/env';
import { jsonObject, micros, uuid, type ResourceDef } from '../define';
import { isoInstant } from '../../../../shared/iso-instant';

const code = () => Joi.string().pattern(/^[A-Za-z0-9_-]{4,64}$/);

export function paymentCustomers(): ResourceDef {
  return {
    path: `/${config().paymentsProcessorName}/customers`,
    family: 'payments-processor',
    object: 'payment_customer',
    description: "Organizations' customer records at the payment processor (the path segment is PAYMENTS_PROCESSOR_NAME).",
    model: PaymentAccount,
    bumpsEpoch: false,
    fields: {
      org_id: { schema: uuid(), required: true, createOnly: true, filter: true },
      customer_id: { schema: Joi.string().pattern(/^[A-Za-z0-9_-]{1,128}$/), required: true, filter: true },
      status: { schema: Joi.string().valid('active', 'past_due', 'canceled'), filter: true },
      metadata: { schema: jsonObject() },
    },
  };
}

export const referrals: ResourceDef = {
  path: '/referrals',
  family: 'referrals',
  object: 'referral',
  description: 'Referral codes, who referred whom, and the reward.',
  model: Referral,
  bumpsEpoch: false,
  fields: {
    code: { schema: code(), required: true, filter: true },
    referrer_user_id: { schema: uuid().allow(null), filter: true },
    referred_org_id: { schema: uuid().allow(null), filter: true },
    status: { schema: Joi.string().valid('pending', 'qualified', 'rewarded', 'void'), filter: true },
    reward_micros: { schema: micros(), bigint: true },
  },
};

export const inviteCodes: ResourceDef = {
  path: '/invite-codes',
  family: 'invite-codes',
  object: 'invite_code',
  description: 'Invite codes; `code` is generated when not given, and shown only to keys holding invite-codes:write (null to read-only keys: it redeems the invitation). A code with an `org_id` is redeemed at `/dashboard/invite/{code}` (the invitee sets a password and joins with `role`; `email`, when set, is the only address that may redeem it). Creating one with `org_id` and `email` emails the link when SMTP_URL is set; the answer\'s `mail` is `sent`, `failed` (the mail server refused or did not answer; send the link yourself), `not_configured`, or null (no org or email).',
  model: InviteCode,
  bumpsEpoch: false,
  fields: {
    // whoever reads a code can redeem it (an owner's invitation hands over the org): docs/security.md
    code: { schema: code(), filter: true, writersOnly: true, description: 'Redeems the invitation: returned to keys holding invite-codes:write (and in the create answer); null to read-only keys, which may not filter by it.' },
    org_id: { schema: uuid().allow(null), filter: true },
    plan_id: { schema: uuid().allow(null) },
    email: { schema: Joi.string().email({ tlds: false }).max(320).allow(null), filter: true },
    role: { schema: Joi.string().valid('owner', 'member') },
    max_uses: { schema: Joi.number().integer().min(1).max(1_000_000) },
    uses: { schema: Joi.number().integer(), readOnly: true },
    expires_at: { schema: isoInstant().allow(null) },
    disabled: { schema: Joi.boolean(), filter: true },
  },
  check: async (values, _req, row) => {
    if (!row && !values.code) values.code = crypto.randomBytes(9).toString('base64url');
    if (typeof values.email === 'string') values.email = values.email.toLowerCase(); // redemption compares lowercased
  },
  // an org invitation for an email is mailed like the dashboard's (when SMTP_URL is set); `mail` says what became of it
  afterCreate: async (row) => {
    const inv = row as InviteCode;
    const org = inv.orgId && inv.email ? await Organization.findByPk(inv.orgId) : null;
    return { mail: org ? (await mailInvitation(inv, org.name, 'An operator')).outcome : null };
  },
};

export const wallets: ResourceDef = {
  path: '/billing/wallets',
  family: 'billing',
  object: 'wallet',
  description: "Organizations' prepaid wallets. Balances move only through billing records (POST /billing/records); `credits_bound` caps one reservation.",
  model: Wallet,
  ops: ['list', 'get', 'update'],
  bumpsEpoch: false,
  fields: {
    org_id: { schema: uuid(), readOnly: true, filter: true },
    balance_micros: { schema: Joi.number().integer(), readOnly: true, bigint: true },
    reserved_micros: { schema: Joi.number().integer(), readOnly: true, bigint: true },
    available_micros: { schema: Joi.number().integer(), readOnly: true, fromRow: (r) => Number(r.balanceMicros) - Number(r.reservedMicros) },
    credits_bound: { schema: micros().allow(null), bigint: true },
  },
};

export const reservations: ResourceDef = {
  path: '/billing/reservations',
  family: 'billing',
  object: 'credit_reservation',
  description: 'Credit reservations held for requests (read only).',
  model: CreditReservation,
  ops: ['list', 'get'],
  fields: {
    org_id: { schema: uuid(), readOnly: true, filter: true },
    request_id: { schema: Joi.string(), readOnly: true, filter: true },
    amount_micros: { schema: Joi.number().integer(), readOnly: true, bigint: true },
    settled_micros: { schema: Joi.number().integer().allow(null), readOnly: true, bigint: true },
    state: { schema: Joi.string().valid('reserved', 'settled', 'released'), readOnly: true, filter: true },
  },
};

/** Billing records: listed here; created by the custom route that also moves the wallet. */
export const billingRecords: ResourceDef = {
  path: '/billing/records',
  family: 'billing',
  object: 'billing_record',
  description: 'Money movements on wallets (top-ups, credits, adjustments), in micro-dollars.',
  model: BillingRecord,
  ops: ['list', 'get'],
  fields: {
    org_id: { schema: uuid(), readOnly: true, filter: true },
    kind: { schema: Joi.string().valid('top_up', 'credit', 'adjustment'), readOnly: true, filter: true },
    amount_micros: { schema: Joi.number().integer(), readOnly: true, bigint: true },
    note: { schema: Joi.string().allow(null), readOnly: true },
    actor: { schema: Joi.string().allow(null), readOnly: true },
  },
};
